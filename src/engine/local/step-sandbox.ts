// The filesystem and process sandbox of a local step: what it is, how it is started, and how we
// find out that it works on this host. step-process.ts runs steps in it.
//
// Mechanism: util-linux `unshare --mount --pid --ipc --uts --fork` (installed on every Debian
// machine; bubblewrap in Debian 12 is 0.8.0, which has no overlay options) runs a small POSIX
// shell script (INIT below) as PID 1 of the new PID namespace. The script:
//   1. mounts an overlayfs with the host's `/` as its read-only lower layer and an upper and work
//      directory in the step's scratch directory on the host, so every write the step makes
//      (including /tmp, which on these machines is part of `/`) lands in its own upper directory
//      and nothing reaches the host's files. Further real filesystems mounted below `/` get an
//      overlay each (step-mounts.ts); tmpfs and other pseudo filesystems elsewhere fall away, so
//      the step sees the directory beneath them, writable and private to it (a tmpfs /tmp on some
//      other host becomes a private, empty /tmp). A layer that overlayfs refuses (a file bind
//      mount, an overlay nested too deep) is bound in read-only instead.
//   2. mounts a fresh /proc (of the new PID namespace: the step sees only its own processes), a
//      fresh read-only /sys, and a small /dev of its own: a tmpfs holding copies of null, zero,
//      full, random, urandom and tty, the usual fd/stdin/stdout/stderr/ptmx links, a new devpts
//      instance and a private tmpfs /dev/shm. The host's disks are not in it.
//   3. covers the scratch root with an empty read-only tmpfs, so that a step cannot see the other
//      steps' upper directories;
//   4. places the step's input files and folders, running `chroot` into the view so that paths
//      resolve as the step will see them (an absolute symlink leads into the view, not the host);
//   5. `pivot_root`s into the view and detaches the host's tree (it keeps one directory handle,
//      fd 6, on the step's collection directory);
//   6. runs the command (stdin /dev/null; stdout and stderr on pipes of their own, as a container
//      runtime has them) with exactly the environment given, and waits for it; a SIGTERM makes it
//      send SIGTERM to every process of the namespace;
//   7. when the command has exited, kills whatever it left running (as Kubernetes does when a
//      container's main process ends), then copies each declared output path, as the step sees
//      it, out through fd 6 into the scratch directory, and reports on fd 3.
// When PID 1 exits the kernel kills every process left in the namespace, and when the last one is
// gone the mount namespace and all its mounts go with it: nothing is mounted on the host, ever.
// `setpriv --pdeathsig SIGKILL` in front of unshare, and unshare's --kill-child, tie the step's
// life to the server's process.
//
// Requirements: root (CAP_SYS_ADMIN): an unprivileged user namespace cannot mount an overlay of
// `/` (its submounts are locked), and overlayfs in the kernel. sandboxAvailable() checks both by
// running a step.
//
// What it does NOT isolate: the network (the host's, including its loopback services), users
// (the step runs as the server's root, with all capabilities: it can remount, load modules, reach
// the host through /proc/1/fd of its own init, or kill the sandbox), resources (no CPU, memory or
// disk limits: a step's writes fill the scratch root's disk), time and the kernel. It is a
// collision guard for honest pipelines, not a security boundary against hostile ones.
import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UNSAFE_PATH } from "./step-mounts.js";

/** The PATH used to find the sandbox's own tools, and inside the script before the step runs. */
export const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const TOOLS = ["setpriv", "unshare", "mount", "umount", "pivot_root", "chroot", "cp", "install", "mkdir", "env", "sh"] as const;
type Tool = (typeof TOOLS)[number];

/** Where each tool lives, or the names of those not found. */
async function findTools(): Promise<{ paths: Record<Tool, string>; missing: Tool[] }> {
  const paths = {} as Record<Tool, string>;
  const missing: Tool[] = [];
  for (const tool of TOOLS) {
    let found: string | undefined;
    for (const dir of SYSTEM_PATH.split(":")) {
      try {
        await access(join(dir, tool), constants.X_OK);
        found = join(dir, tool);
        break;
      } catch {
        // next directory
      }
    }
    if (found) paths[tool] = found;
    else missing.push(tool);
  }
  return { paths, missing };
}

export function shellQuote(value: string): string {
  if (value.includes("\0")) throw new Error("a NUL character cannot be passed to a local step");
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export interface SandboxPlan {
  scratch: string; // the step's scratch directory (holds upper/, work/, root/, in/, out/, dev/, layers/)
  scratchRoot: string; // covered in the view
  layers: string[]; // host mount points below / that get an overlay of their own (layers/<i>/)
  staging: string; // shell commands run chrooted in the view, with fd 5 on in/ ("" for none)
  directoryBinds: { from: string; name: string }[]; // host folders bound at in/<name> for staging
  workingDir: string;
  stepPath: string; // the step's PATH, to find its executable
  outputs: string[]; // normalized output paths; collected into out/<i>/
  environment: string[]; // NAME=value, the step's whole environment
  argv: string[];
}

/**
 * The PID-1 script. Variables and functions are prefixed `pw_`; its environment is only PATH
 * (the step's environment is set with `env -i` from the positional parameters: pw_n NAME=value
 * entries, then the command). File descriptors:
 * 1 is the step's stdout, 4 its stderr, 2 the script's own diagnostics, 3 its reports: lines
 * `pid <host pid>`, `ready`, `exit <status>`, `out <index> file|directory`, `done`. Exit 125 with
 * a message on fd 2 means the sandbox could not be set up.
 */
const INIT = String.raw`
pw_say() { printf '%s\n' "$*" >&3; }
pw_die() { printf 'pipewright step sandbox: %s\n' "$*" >&2; exit 125; }
umask 022
read -r pw_pid pw_rest </proc/self/stat && pw_say "pid $pw_pid"
pw_root="$pw_scratch/root"
mount -n -t overlay -o "lowerdir=/,upperdir=$pw_scratch/upper,workdir=$pw_scratch/work" overlay "$pw_root" ||
  pw_die "cannot mount an overlayfs of / on $pw_root"
pw_layer() {
  [ -e "$pw_root$1" ] || return 0
  mount -n -t overlay -o "lowerdir=$1,upperdir=$2/upper,workdir=$2/work" overlay "$pw_root$1" 2>/dev/null ||
    { mount -n --bind "$1" "$pw_root$1" && mount -n -o remount,bind,ro "$pw_root$1"; } ||
    pw_die "cannot mount $1 into the view"
}
pw_layers
mount -n -t proc -o nosuid,nodev,noexec proc "$pw_root/proc" || pw_die "cannot mount /proc"
mount -n -t sysfs -o ro,nosuid,nodev,noexec sysfs "$pw_root/sys" || pw_die "cannot mount /sys"
mount -n -t tmpfs -o nosuid,mode=0755,size=1m dev "$pw_root/dev" || pw_die "cannot mount /dev"
cp -a /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty "$pw_scratch/dev/." "$pw_root/dev/" ||
  pw_die "cannot fill /dev"
mount -n -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$pw_root/dev/pts" || pw_die "cannot mount /dev/pts"
mount -n -t tmpfs -o nosuid,nodev,mode=1777 shm "$pw_root/dev/shm" || pw_die "cannot mount /dev/shm"
if [ -n "$pw_staging" ]; then
  exec 5<"$pw_scratch/in"
  pw_binds
  chroot "$pw_root" /bin/sh -c "$pw_staging" || pw_die "cannot place the step's inputs"
  exec 5<&-
fi
if [ -d "$pw_root$pw_scratch_root" ]; then
  mount -n -t tmpfs -o ro,mode=0755,size=4k scratch "$pw_root$pw_scratch_root" || pw_die "cannot cover the scratch root"
fi
exec 6<"$pw_scratch/out"
cd "$pw_root" && pivot_root . . && umount -n -l . && cd / || pw_die "cannot pivot_root into the view"
if [ ! -d "$pw_workdir" ]; then mkdir -p -- "$pw_workdir" || pw_die "cannot create the working directory $pw_workdir"; fi
cd -- "$pw_workdir" || pw_die "cannot enter the working directory $pw_workdir"
pw_i=0
for pw_arg do
  if [ "$pw_i" -eq "$pw_n" ]; then pw_cmd=$pw_arg; break; fi
  pw_i=$((pw_i + 1))
done
pw_found() {
  case $1 in */*) [ -f "$1" ] && [ -x "$1" ]; return ;; esac
  pw_ifs=$IFS
  IFS=:
  for pw_dir in $pw_step_path; do
    [ -n "$pw_dir" ] || pw_dir=.
    if [ -f "$pw_dir/$1" ] && [ -x "$pw_dir/$1" ]; then IFS=$pw_ifs; return 0; fi
  done
  IFS=$pw_ifs
  return 1
}
pw_say ready
if ! pw_found "$pw_cmd"; then
  printf 'pipewright: %s: executable file not found in PATH (%s) of the step\n' "$pw_cmd" "$pw_step_path" >&4
  pw_say "exit 127"
  pw_say done
  exit 0
fi
pw_term=0
trap 'pw_term=1; kill -TERM -1 2>/dev/null' TERM
env -i --default-signal=INT,QUIT -- "$@" </dev/null 2>&4 3>&- 4>&- 6>&- &
pw_child=$!
while :; do
  pw_status=0
  wait "$pw_child" || pw_status=$?
  if [ "$pw_status" -gt 128 ] && kill -0 "$pw_child" 2>/dev/null; then continue; fi
  break
done
kill -KILL -1 2>/dev/null
[ "$pw_term" = 1 ] && exit 0
pw_say "exit $pw_status"
pw_collect() {
  [ -e "$1" ] || return 0
  if [ -d "$1" ]; then pw_kind=directory; else pw_kind=file; fi
  if cp -a -H -- "$1" "/proc/self/fd/6/$2/"; then pw_say "out $2 $pw_kind"
  else printf 'pipewright: could not collect the output %s\n' "$1" >&2; fi
}
pw_outputs
pw_say done
`;

/** The script for one step: its settings, then INIT. */
export function initScript(plan: SandboxPlan): string {
  const lines = ["# pipewright local step init (generated; see src/engine/local/step-sandbox.ts)"];
  lines.push(`pw_scratch=${shellQuote(plan.scratch)}`);
  lines.push(`pw_scratch_root=${shellQuote(plan.scratchRoot)}`);
  lines.push(`pw_workdir=${shellQuote(plan.workingDir)}`);
  lines.push(`pw_step_path=${shellQuote(plan.stepPath)}`);
  lines.push(`pw_staging=${shellQuote(plan.staging)}`);
  // The environment and the command, in the script (in the step's 0700 scratch directory) rather
  // than on a command line that every user of the host can read.
  lines.push(`pw_n=${plan.environment.length}`);
  lines.push(`set -- ${[...plan.environment, ...plan.argv].map(shellQuote).join(" ")}`);
  const fn = (name: string, body: string[]) => `${name}() {\n  :\n${body.map((b) => `  ${b}\n`).join("")}}`;
  lines.push(fn("pw_layers", plan.layers.map((point, i) => `pw_layer ${shellQuote(point)} "$pw_scratch/layers/${i}"`)));
  lines.push(
    fn(
      "pw_binds",
      plan.directoryBinds.map(
        (bind) =>
          `mount -n --bind ${shellQuote(bind.from)} "$pw_scratch/in/${bind.name}" || pw_die ${shellQuote(`cannot bind the input folder ${bind.from}`)}`,
      ),
    ),
  );
  lines.push(fn("pw_outputs", plan.outputs.map((path, i) => `pw_collect ${shellQuote(path)} ${i}`)));
  return `${lines.join("\n")}\n${INIT}`;
}

/** Refuses paths overlayfs' options cannot carry. */
export function checkScratchPath(path: string): void {
  if (UNSAFE_PATH.test(path)) throw new Error(`the local step scratch directory ${JSON.stringify(path)} contains , : \\ or a newline, which overlayfs cannot take`);
}

export interface SandboxCommand {
  file: string;
  args: string[];
}

/** The command line that runs the script at `initPath` as PID 1 of a new sandbox. */
export async function sandboxCommand(initPath: string): Promise<SandboxCommand> {
  const { paths, missing } = await toolsOnce();
  if (missing.length > 0) throw new Error(`the local step sandbox needs ${missing.join(", ")} (util-linux, coreutils)`);
  return {
    file: paths.setpriv,
    args: [
      "--pdeathsig", "SIGKILL", "--",
      paths.unshare, "--mount", "--pid", "--ipc", "--uts", "--fork", "--kill-child", "--propagation", "private", "--",
      paths.sh, initPath,
    ],
  };
}

let tools: ReturnType<typeof findTools> | undefined;
function toolsOnce(): ReturnType<typeof findTools> {
  tools ??= findTools();
  return tools;
}

let availability: Promise<{ ok: boolean; how: string; why?: string }> | undefined;

const HOW = "util-linux unshare (mount, PID, IPC and UTS namespaces) with a per-step overlayfs view of /";

/** Whether steps can run here: root, the tools, overlayfs, and a trial step. Cached. */
export function sandboxAvailable(): Promise<{ ok: boolean; how: string; why?: string }> {
  availability ??= probe();
  return availability;
}

async function probe(): Promise<{ ok: boolean; how: string; why?: string }> {
  if (process.platform !== "linux") return { ok: false, how: HOW, why: `local steps need Linux namespaces; this is ${process.platform}` };
  if (process.getuid?.() !== 0) {
    return { ok: false, how: HOW, why: "local steps need root (CAP_SYS_ADMIN) to mount an overlay of /; run the server as root" };
  }
  const { missing } = await toolsOnce();
  if (missing.length > 0) return { ok: false, how: HOW, why: `missing commands: ${missing.join(", ")} (install util-linux and coreutils)` };
  const filesystems = await readFile("/proc/filesystems", "utf8").catch(() => "");
  if (!/\toverlay$/m.test(filesystems)) return { ok: false, how: HOW, why: "the kernel has no overlayfs (modprobe overlay)" };
  // A trial: mount namespaces may still be refused (a container without CAP_SYS_ADMIN, seccomp).
  const dir = await mkdtemp(join(tmpdir(), "pipewright-sandbox-probe-"));
  try {
    await Promise.all(["upper", "work", "root"].map((sub) => mkdir(join(dir, sub))));
    const { paths } = await toolsOnce();
    const script = [
      `mount -n -t overlay -o lowerdir=/,upperdir=${shellQuote(`${dir}/upper`)},workdir=${shellQuote(`${dir}/work`)} overlay ${shellQuote(`${dir}/root`)} || exit 3`,
      `mount -n -t proc proc ${shellQuote(`${dir}/root/proc`)} || exit 4`,
      `${shellQuote(paths.env)} -i --default-signal=INT true || exit 5`,
    ].join("\n");
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(paths.unshare, ["--mount", "--pid", "--fork", "--kill-child", "--propagation", "private", "--", paths.sh, "-c", script], {
        stdio: ["ignore", "ignore", "pipe"],
        env: { PATH: SYSTEM_PATH },
      });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
      child.on("error", (err) => resolve({ code: null, stderr: err.message }));
      child.on("close", (code) => resolve({ code, stderr }));
    });
    if (result.code !== 0) {
      if (result.code === 5) return { ok: false, how: HOW, why: "env lacks --default-signal (coreutils 8.31 or later is needed)" };
      const what = result.code === 3 ? "an overlayfs mount of /" : result.code === 4 ? "a fresh /proc" : "new mount and PID namespaces";
      return { ok: false, how: HOW, why: `the host refused ${what}: ${result.stderr.trim() || `exit ${result.code}`}` };
    }
    return { ok: true, how: HOW };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
