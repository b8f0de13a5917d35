// Which host mounts a local step sees through overlays of their own, and a run of a step on a host
// with a bind mount and a tmpfs below / (made in a private mount namespace of a child process).
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseMountInfo, planLayers, type HostMount } from "../../src/engine/local/step-mounts.js";

const ext4 = (mountPoint: string): HostMount => ({ mountPoint, fsType: "ext4" });
const tmpfs = (mountPoint: string): HostMount => ({ mountPoint, fsType: "tmpfs" });

describe("host mounts", () => {
  it("parses /proc/self/mountinfo lines, escapes included", () => {
    const text = [
      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
      "22 27 0:21 / /proc rw,relatime - proc proc rw",
      "40 27 8:1 / /mnt/with\\040space rw shared:5 - xfs /dev/sdb1 rw",
      "",
    ].join("\n");
    expect(parseMountInfo(text)).toEqual([ext4("/"), { mountPoint: "/proc", fsType: "proc" }, { mountPoint: "/mnt/with space", fsType: "xfs" }]);
  });

  it("layers real filesystems below /, parents first, and lets pseudo and memory ones fall away", () => {
    const mounts = [
      ext4("/"),
      { mountPoint: "/proc", fsType: "proc" },
      { mountPoint: "/sys/fs/cgroup", fsType: "cgroup2" },
      { mountPoint: "/dev/shm", fsType: "tmpfs" },
      { mountPoint: "/home/u/data", fsType: "xfs" },
      ext4("/home"),
      tmpfs("/tmp"),
      ext4("/tmp/inside-tmpfs"),
      tmpfs("/run"),
      { mountPoint: "/var/lib/docker/overlay2/x/merged", fsType: "overlay" },
      { mountPoint: "/mnt/remote", fsType: "fuse.sshfs" },
      ext4("/mnt/odd,name"),
      ext4("/srv/scratch/steps/inner"),
      ext4("/srv"),
    ];
    expect(planLayers(mounts, ["/srv/scratch"])).toEqual(["/home", "/srv", "/home/u/data"]);
  });

  it("uses the mount that covers the others at the same point", () => {
    expect(planLayers([ext4("/"), ext4("/mnt"), tmpfs("/mnt")], [])).toEqual([]);
    expect(planLayers([ext4("/"), tmpfs("/mnt"), ext4("/mnt")], [])).toEqual(["/mnt"]);
  });

  it("reads this host's mounts", async () => {
    const mounts = parseMountInfo(await readFile("/proc/self/mountinfo", "utf8"));
    expect(mounts.some((mount) => mount.mountPoint === "/")).toBe(true);
  });
});

describe("a step on a host with mounts below /", () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("sees a bound folder through an overlay of its own and a private view under a tmpfs", async () => {
    dir = await mkdtemp(join(tmpdir(), "pipewright-step-mounts-"));
    for (const sub of ["source", "bound", "memory"]) await mkdir(join(dir, sub));
    await writeFile(join(dir, "source", "f"), "from the source\n");
    const module = resolve("src/engine/local/step-process.ts");
    const child = join(dir, "child.mjs");
    await writeFile(
      child,
      `const { runStep } = await import(${JSON.stringify(module)});
const d = ${JSON.stringify(dir)};
const r = await runStep({ argv: ["sh", "-c", \`cat \${d}/bound/f; echo changed > \${d}/bound/f; echo new > \${d}/bound/g; ls -A \${d}/memory; echo t > \${d}/memory/t; grep -c ' - overlay ' /proc/self/mountinfo\`],
  env: {}, outputPaths: [d + "/bound/g", d + "/memory/t"] }, { scratchRoot: d + "/scratch" });
process.stdout.write(JSON.stringify({ exitCode: r.exitCode, log: Buffer.from(r.log).toString(), outputs: [...r.outputs.keys()] }));
await r.dispose();
`,
    );
    // The mounts exist only in the child's own mount namespace.
    const script = `mount --bind "$1/source" "$1/bound" && mount -t tmpfs memory "$1/memory" && echo hidden > "$1/memory/h" && exec node --import tsx "$1/child.mjs"`;
    const output = await new Promise<string>((resolvePromise, reject) => {
      const proc = spawn("unshare", ["--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", dir as string], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      proc.stdout.setEncoding("utf8").on("data", (text: string) => (out += text));
      proc.on("error", reject);
      proc.on("close", (code) => (code === 0 ? resolvePromise(out) : reject(new Error(`child exited ${code}: ${out}`))));
    });
    const result = JSON.parse(output) as { exitCode: number; log: string; outputs: string[] };
    expect(result.exitCode).toBe(0);
    // The bound folder's file as on the host; the tmpfs fell away (the folder beneath is empty); two overlays.
    expect(result.log).toBe("from the source\n2\n");
    expect(result.outputs).toEqual([`${dir}/bound/g`, `${dir}/memory/t`]);
    expect(await readFile(join(dir, "source", "f"), "utf8")).toBe("from the source\n");
  }, 30_000);
});
