import { readdirSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { httpStatusFromCode } from "../../../src/errors.js";
import { extractWorkflowText, maxPackageBytes } from "../../../src/services/pipelines/pipeline-package.js";
import { parseWorkflow, workflowParameters } from "../../../src/services/pipelines/workflow.js";
import { tarGzOf, tarOf, uploadsDir, zipOf } from "./archives.js";
import { thrownConnectError as thrown } from "../../helpers/thrown.js";

const argumentsYaml = readFileSync(join(uploadsDir, "arguments-parameters.yaml"), "utf8");
const argumentsParameters = [{ name: "param1", value: "hello" }, { name: "param2" }];

/** What each file in shared/testdata/uploads gives, as an upload named like the file. */
type Outcome =
  | { workflow: string; parameters: { name: string; value?: string }[] }
  | { rejected: RegExp } // by extractWorkflowText
  | { invalidWorkflow: RegExp }; // extracted, then rejected by parseWorkflow

const accepted: Outcome = { workflow: argumentsYaml, parameters: argumentsParameters };
const unexpectedFormat = { rejected: /^Unexpected pipeline file format\. Support \.zip, \.tar\.gz or YAML\.$/ };

const fixtures: Record<string, Outcome> = {
  "arguments-parameters.yaml": accepted,
  // First YAML entry; the __MACOSX/ resource fork after it is not a candidate anyway.
  "arguments.pipeline.broken_file.zip": accepted,
  // A single entry not named pipeline.yaml: the first-YAML rule.
  "arguments.pipeline.zip": accepted,
  "arguments_tarball/arguments.tar.gz": accepted,
  "arguments_zip/arguments-parameters.zip": accepted,
  // Zero-byte files and plain text: no magic bytes, so no archive, whatever the name says.
  "empty_tarball/empty.tar.gz": unexpectedFormat,
  "empty_zip/empty.zip": unexpectedFormat,
  "invalid-workflow.yaml": { invalidWorkflow: /^Unexpected resource type\. Expected: Workflow\. Received: $/ },
  "malformated_tarball.tar.gz": unexpectedFormat,
  "malformated_zip.zip": unexpectedFormat,
  // Starts with PK, so it is read as a zip, and fails.
  "malformed_zip2.zip": { rejected: /^Error extracting pipeline from the zip file\. Not a valid zip file: End of central directory/ },
  "non_yaml_tarball/non_yaml_file.foo": unexpectedFormat,
  "non_yaml_tarball/non_yaml_tarball.tar.gz": {
    rejected: /^Expecting a pipeline\.yaml file inside the tarball\. Got: non_yaml_file\.foo$/,
  },
  "non_yaml_zip/non_yaml_file.foo": unexpectedFormat,
  "non_yaml_zip/non_yaml_file.zip": { rejected: /^Expecting a pipeline\.yaml file inside the zip\. Got: non_yaml_file\.foo$/ },
  // A KFP component spec, not an Argo workflow.
  "pipeline_plus_component/component.yaml": { invalidWorkflow: /^Unsupported argo version\. Expected: argoproj\.io\/v1alpha1\. Received: $/ },
  "pipeline_plus_component/pipeline.yaml": accepted,
  // component.yaml comes first in both archives: pipeline.yaml must win by name.
  "pipeline_plus_component/pipeline_plus_component.tar.gz": accepted,
  "pipeline_plus_component/pipeline_plus_component.zip": accepted,
  "unknown_format.foo": unexpectedFormat,
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(uploadsDir, join(entry.parentPath, entry.name)))
    .sort();
}

/** The ConnectError a promise rejects with. */
async function rejection(promise: Promise<unknown>): Promise<ConnectError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}


const extract = (fileName: string, bytes: Uint8Array | string) =>
  extractWorkflowText(fileName, typeof bytes === "string" ? Buffer.from(bytes) : bytes);

describe("the upload fixtures", () => {
  it("have an expected outcome each, and each expectation a fixture", () => {
    expect(filesUnder(uploadsDir)).toEqual(Object.keys(fixtures).sort());
  });

  it.each(Object.entries(fixtures))("%s", async (file, outcome) => {
    const bytes = readFileSync(join(uploadsDir, file));
    const upload = extractWorkflowText(basename(file), bytes);
    if ("rejected" in outcome) {
      const err = await rejection(upload);
      expect(err.code).toBe(Code.InvalidArgument);
      expect(httpStatusFromCode(err.code)).toBe(400);
      expect(err.rawMessage).toMatch(outcome.rejected);
      return;
    }
    const text = await upload;
    if ("invalidWorkflow" in outcome) {
      const err = thrown(() => parseWorkflow(text));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toMatch(outcome.invalidWorkflow);
      return;
    }
    expect(text).toBe(outcome.workflow);
    expect(workflowParameters(parseWorkflow(text))).toEqual(outcome.parameters);
  });
});

describe("format detection", () => {
  it("takes .yaml and .yml files as they are, in any letter case", async () => {
    for (const name of ["p.yaml", "p.yml", "P.YAML", "p.Yml", "with space.yaml"]) {
      expect(await extract(name, argumentsYaml)).toBe(argumentsYaml);
    }
  });

  it("keeps the text byte for byte: BOM, CRLF, no final newline", async () => {
    const text = "\uFEFFapiVersion: argoproj.io/v1alpha1\r\nkind: Workflow  \r\n# end";
    expect(await extract("p.yaml", text)).toBe(text);
    expect(await extract("p.zip", zipOf([{ name: "pipeline.yaml", data: text }]))).toBe(text);
    expect(await extract("p.tar.gz", tarGzOf([{ name: "pipeline.yaml", data: text }]))).toBe(text);
  });

  it("rejects YAML files that are not UTF-8", async () => {
    const err = await rejection(extract("p.yaml", Buffer.from([0x6b, 0x3a, 0x20, 0xe9, 0x0a])));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(/not UTF-8/);
  });

  it("reads archives by their magic bytes, whatever their name", async () => {
    const zip = zipOf([{ name: "pipeline.yaml", data: argumentsYaml }]);
    const tarball = tarGzOf([{ name: "pipeline.yaml", data: argumentsYaml }]);
    for (const name of ["p.pipeline", "p.ai-hub-package", "noextension", "p.tar.gz"]) {
      expect(await extract(name, zip)).toBe(argumentsYaml);
    }
    for (const name of ["p.pipeline", "p.zip", "p.tgz"]) {
      expect(await extract(name, tarball)).toBe(argumentsYaml);
    }
  });

  it("rejects YAML whose name does not say so", async () => {
    expect((await rejection(extract("pipeline.json", argumentsYaml))).rawMessage).toMatch(/^Unexpected pipeline file format/);
    expect((await rejection(extract("", argumentsYaml))).rawMessage).toMatch(/^Unexpected pipeline file format/);
  });

  it("needs more than the two magic bytes", async () => {
    expect((await rejection(extract("p", "PK"))).rawMessage).toMatch(/^Unexpected pipeline file format/);
    expect((await rejection(extract("p", Buffer.from([0x1f, 0x8b])))).rawMessage).toMatch(/^Unexpected/);
  });
});

describe("zip packages", () => {
  it("prefers pipeline.yaml (or ./pipeline.yaml) over earlier YAML entries", async () => {
    for (const name of ["pipeline.yaml", "./pipeline.yaml"]) {
      const zip = zipOf([
        { name: "component.yaml", data: "name: c" },
        { name: "other.yml", data: "name: o" },
        { name, data: argumentsYaml },
      ]);
      expect(await extract("p.zip", zip)).toBe(argumentsYaml);
    }
  });

  it("otherwise takes the first YAML entry, skipping directories, macOS metadata and other files", async () => {
    const zip = zipOf([
      { name: "docs/" },
      { name: "__MACOSX/._first.yaml", data: "binary junk" },
      { name: "README.md", data: "# readme" },
      { name: "dir/first.YML", data: argumentsYaml },
      { name: "second.yaml", data: "name: second" },
    ]);
    expect(await extract("p.zip", zip)).toBe(argumentsYaml);
  });

  it("reads stored (uncompressed) entries", async () => {
    expect(await extract("p.zip", zipOf([{ name: "pipeline.yaml", data: argumentsYaml, method: 0 }]))).toBe(argumentsYaml);
  });

  it("names what it found when there is no YAML entry", async () => {
    const zip = zipOf([{ name: "a.txt" }, { name: "b/" }, { name: "c.json" }]);
    expect((await rejection(extract("p.zip", zip))).rawMessage).toBe(
      "Expecting a pipeline.yaml file inside the zip. Got: a.txt, b/, c.json",
    );
  });

  it("rejects a well-formed zip with no entries", async () => {
    const err = await rejection(extract("p.zip", zipOf([])));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toBe("Error extracting pipeline from the zip file. Empty zip file.");
  });

  it("rejects truncated and corrupt zips", async () => {
    const zip = zipOf([{ name: "pipeline.yaml", data: argumentsYaml }]);
    const truncated = zip.subarray(0, zip.length - 30);
    expect((await rejection(extract("p.zip", truncated))).rawMessage).toMatch(/Not a valid zip file/);
    const corrupt = Buffer.from(zip);
    corrupt.fill(0xff, 30 + "pipeline.yaml".length, 30 + "pipeline.yaml".length + 40); // the deflate stream
    const err = await rejection(extract("p.zip", corrupt));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(/Not a valid zip file/);
  });

  it("refuses an entry larger than the limit without inflating it (zip bomb)", async () => {
    const bomb = zipOf([{ name: "pipeline.yaml", data: new Uint8Array(maxPackageBytes + 1) }]);
    expect(bomb.length).toBeLessThan(100_000);
    const err = await rejection(extract("p.zip", bomb));
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toBe("File size too large. Maximum supported size: 33554432");
  });

  it("rejects an entry that inflates to more than it declares", async () => {
    const liar = zipOf([{ name: "pipeline.yaml", data: new Uint8Array(1_000_000), declaredSize: 100 }]);
    const err = await rejection(extract("p.zip", liar));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(/Not a valid zip file/);
  });
});

describe("tar.gz packages", () => {
  it("prefers pipeline.yaml (or ./pipeline.yaml) over earlier YAML entries", async () => {
    for (const name of ["pipeline.yaml", "./pipeline.yaml"]) {
      const tarball = tarGzOf([
        { name: "./", type: "Directory" },
        { name: "./component.yaml", data: "name: c" },
        { name, data: argumentsYaml },
        { name: "later.yaml", data: "name: later" },
      ]);
      expect(await extract("p.tar.gz", tarball)).toBe(argumentsYaml);
    }
  });

  it("otherwise takes the first YAML regular file", async () => {
    const tarball = tarGzOf([
      { name: "dir.yaml/", type: "Directory" },
      { name: "link.yaml", type: "SymbolicLink" },
      { name: "notes.txt", data: "notes" },
      { name: "a/first.yml", data: argumentsYaml },
      { name: "second.yaml", data: "name: second" },
    ]);
    expect(await extract("p.tgz", tarball)).toBe(argumentsYaml);
  });

  it("reads long (pax) entry names", async () => {
    const name = `${"d".repeat(120)}/${"n".repeat(120)}.yaml`;
    expect(await extract("p.tar.gz", tarGzOf([{ name, data: argumentsYaml }]))).toBe(argumentsYaml);
  });

  it("names what it found when there is no YAML entry", async () => {
    const tarball = tarGzOf([{ name: "x.txt", data: "x" }, { name: "y/", type: "Directory" }]);
    expect((await rejection(extract("p.tar.gz", tarball))).rawMessage).toBe(
      "Expecting a pipeline.yaml file inside the tarball. Got: x.txt, y/",
    );
  });

  it.each([
    ["a tar of zero blocks", gzipSync(Buffer.alloc(1024))],
    ["gzip'd text", gzipSync("I pretended to be a tarball")],
    ["a truncated gzip stream", tarGzOf([{ name: "pipeline.yaml", data: argumentsYaml }]).subarray(0, 60)],
    ["a truncated tar", gzipSync(tarOf([{ name: "pipeline.yaml", data: "x".repeat(2000) }]).subarray(0, 1024))],
    ["a bad header checksum", gzipSync(Buffer.concat([Buffer.alloc(100, 0x61), Buffer.alloc(924)]))],
  ])("rejects %s", async (_what, bytes) => {
    const err = await rejection(extract("p.tar.gz", bytes));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(/^Error extracting pipeline from the tarball file\. Not a valid tarball file/);
  });

  it("refuses an entry larger than the limit without keeping it", async () => {
    const bomb = tarGzOf([{ name: "pipeline.yaml", data: new Uint8Array(maxPackageBytes + 1) }]);
    expect(bomb.length).toBeLessThan(200_000);
    const err = await rejection(extract("p.tar.gz", bomb));
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toBe("File size too large. Maximum supported size: 33554432");
  });

  it("passes over a large entry it does not need", async () => {
    const tarball = tarGzOf([
      { name: "big.bin", data: new Uint8Array(maxPackageBytes + 1) },
      { name: "pipeline.yaml", data: argumentsYaml },
    ]);
    expect(await extract("p.tar.gz", tarball)).toBe(argumentsYaml);
  });
});

describe("size", () => {
  it("accepts exactly the limit and refuses one byte more", async () => {
    const exact = Buffer.alloc(maxPackageBytes, 0x20);
    expect((await extract("p.yaml", exact)).length).toBe(maxPackageBytes);
    const err = await rejection(extract("p.yaml", Buffer.alloc(maxPackageBytes + 1, 0x20)));
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toBe("File size too large. Maximum supported size: 33554432");
  });
});
