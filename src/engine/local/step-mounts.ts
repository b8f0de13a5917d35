// Which of the host's mounts a local step sees, and how. An overlayfs of `/` shows only the root
// filesystem, not what is mounted below it, so the step sandbox (step-sandbox.ts) gives each
// further "real" filesystem mounted under / (a separate /home or /work, say) an overlay of its
// own, and lets pseudo and memory filesystems (tmpfs /tmp or /run, cgroup, …) fall away: at those
// paths the step sees the directory beneath, writable in its own overlay. /proc, /sys and /dev are
// made fresh by the sandbox itself.
import { readFile } from "node:fs/promises";

export interface HostMount {
  mountPoint: string;
  fsType: string;
}

/** Filesystems whose contents are not files a step expects to find on the host. */
const PSEUDO_FS = new Set([
  "tmpfs", "ramfs", "proc", "sysfs", "devtmpfs", "devpts", "mqueue", "cgroup", "cgroup2", "securityfs",
  "debugfs", "tracefs", "bpf", "pstore", "hugetlbfs", "configfs", "fusectl", "binfmt_misc", "autofs",
  "efivarfs", "nsfs", "rpc_pipefs", "nfsd", "selinuxfs",
]);

/** Mounted trees that are never what a step wants (container runtimes' layers). */
const SKIPPED_TREES = ["/proc", "/sys", "/dev", "/run", "/var/lib/docker", "/var/lib/containers", "/var/lib/kubelet"];

/** Characters that overlayfs' option string cannot carry in a path. */
export const UNSAFE_PATH = /[,:\\\n\0]/;

/** The fields of /proc/self/mountinfo that matter here, in mount order. */
export function parseMountInfo(text: string): HostMount[] {
  const mounts: HostMount[] = [];
  for (const line of text.split("\n")) {
    const fields = line.split(" ");
    const dash = fields.indexOf("-");
    if (dash < 6 || fields.length < dash + 2) continue;
    mounts.push({ mountPoint: unescapeMountPath(fields[4]), fsType: fields[dash + 1] });
  }
  return mounts;
}

function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

function isWithin(path: string, tree: string): boolean {
  return tree === "/" || path === tree || path.startsWith(`${tree}/`);
}

/**
 * The mount points below `/` that get an overlay layer of their own, parents before children.
 * A mount is layered when it is the visible one at its mount point, holds a real filesystem, lies
 * outside the skipped trees and `hidden` (the scratch root), and its nearest visible ancestor mount
 * is itself `/` or layered (a mount inside a tmpfs that fell away has no directory to land on).
 */
export function planLayers(mounts: HostMount[], hidden: string[]): string[] {
  const visible = new Map<string, HostMount>();
  for (const mount of mounts) {
    visible.delete(mount.mountPoint); // a later mount at the same point covers the earlier one
    visible.set(mount.mountPoint, mount);
  }
  const points = [...visible.keys()].sort((a, b) => depth(a) - depth(b) || a.localeCompare(b));
  const layered = new Set<string>(["/"]);
  for (const point of points) {
    if (point === "/" || !point.startsWith("/")) continue;
    const mount = visible.get(point) as HostMount;
    if (PSEUDO_FS.has(mount.fsType) || mount.fsType.startsWith("fuse")) continue;
    if (SKIPPED_TREES.some((tree) => isWithin(point, tree)) || hidden.some((tree) => isWithin(point, tree))) continue;
    if (UNSAFE_PATH.test(point)) continue;
    let ancestor = point;
    do ancestor = ancestor.slice(0, Math.max(ancestor.lastIndexOf("/"), 1));
    while (ancestor !== "/" && !visible.has(ancestor));
    if (layered.has(ancestor)) layered.add(point);
  }
  layered.delete("/");
  return points.filter((point) => layered.has(point));
}

function depth(path: string): number {
  return path === "/" ? 0 : path.split("/").length - 1;
}

export async function hostLayers(hidden: string[]): Promise<string[]> {
  return planLayers(parseMountInfo(await readFile("/proc/self/mountinfo", "utf8")), hidden);
}
