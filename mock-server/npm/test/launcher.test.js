// The `mediagen-mock` command npm links into node_modules/.bin
// (bin/mediagen-mock.js): the binary gets the same arguments, environment and
// terminal; the command ends as the binary ends (its exit code, or its
// signal); SIGTERM reaches the binary; a launcher found in the binary's place
// stops with a message instead of starting itself again.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { test } from "node:test";

import { findBinary } from "../index.js";
import { cleanEnv, fakeBinary, npmTree, pathWith, tempDir, version } from "./npm-tree.js";

function launch(tree, args, env) {
  return spawnSync(tree.launcher, args, { cwd: tree.dir, env, encoding: "utf8", timeout: 20_000, killSignal: "SIGKILL" });
}

test("the binary gets the arguments as given, and the command exits with its code", (t) => {
  const tree = npmTree(t, { platform: true });
  const args = ["--listen", "127.0.0.1:0", "two words", "", "--flag=a b"];
  const ran = launch(tree, args, cleanEnv(pathWith(), { FAKE_EXIT: "7" }));
  assert.equal(ran.status, 7, ran.stderr);
  assert.equal(ran.stdout, ["platform package", ...args, ""].join("\n"));
});

test("the real binary through the launcher: its version, and a usage error's exit code", (t) => {
  const tree = npmTree(t);
  const env = cleanEnv(pathWith(), { MEDIAGEN_MOCK_BIN: findBinary() });
  const ran = launch(tree, ["--version"], env);
  assert.equal(ran.status, 0, ran.stderr);
  assert.equal(ran.stdout.trim(), `mediagen-mock ${version}`);
  const refused = launch(tree, ["--no-such-flag"], env);
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /--no-such-flag/);
});

test("a binary killed by a signal ends the command with the same signal", (t) => {
  const dir = tempDir(t);
  const tree = npmTree(t);
  const killed = path.join(dir, "mediagen-mock");
  fs.writeFileSync(killed, "#!/bin/sh\nkill -KILL $$\n");
  fs.chmodSync(killed, 0o755);
  const ran = launch(tree, [], cleanEnv(pathWith(), { MEDIAGEN_MOCK_BIN: killed }));
  assert.equal(ran.signal, "SIGKILL", `status ${ran.status}: ${ran.stderr}`);
});

test("SIGTERM to the command stops the mock it runs, which exits cleanly", { timeout: 60_000 }, async (t) => {
  const tree = npmTree(t);
  const child = spawn(tree.launcher, ["--listen", "127.0.0.1:0"], {
    cwd: tree.dir,
    env: cleanEnv(pathWith(), { MEDIAGEN_MOCK_BIN: findBinary() }),
    stdio: ["ignore", "pipe", "inherit"],
  });
  // The mock is the launcher's child: ended after the test even if the launcher did not pass SIGTERM on.
  const mockPids = () => {
    try {
      return fs.readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
    } catch {
      return [];
    }
  };
  let mocks = [];
  t.after(() => {
    for (const pid of mocks) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {}
    }
    child.kill("SIGKILL");
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  let baseUrl;
  for await (const line of readline.createInterface({ input: child.stdout })) {
    baseUrl = line.match(/listening on (http\S+)/)?.[1];
    if (baseUrl) break;
  }
  assert.ok(baseUrl, "the mock printed no address");
  mocks = mockPids();
  // Answering means it serves, and has its signal handlers in place.
  assert.equal((await fetch(`${baseUrl}/health`)).status, 200);
  child.kill("SIGTERM");
  assert.deepEqual(await exited, { code: 0, signal: null });
  await assert.rejects(fetch(`${baseUrl}/health`), "the mock still answers after the command ended");
});

test("a launcher found where the binary should be stops with a message instead of starting itself", (t) => {
  // pnpm links a bin as a shell script that runs node on the launcher: not a
  // node script to look at, so only the launcher can tell.
  const tree = npmTree(t);
  const shims = tempDir(t);
  fs.writeFileSync(path.join(shims, "mediagen-mock"), `#!/bin/sh\nexec "${process.execPath}" "${tree.launcher}" "$@"\n`);
  fs.chmodSync(path.join(shims, "mediagen-mock"), 0o755);
  const ran = launch(tree, ["--version"], cleanEnv(pathWith(shims, tree.bin)));
  assert.equal(ran.status, 1, `${ran.signal ?? ""} ${ran.stderr}`);
  assert.match(ran.stderr, /found this launcher .* where the binary should be; set MEDIAGEN_MOCK_BIN/);
});

test("with no binary, the command prints the message that names the platform package, and exits 1", (t) => {
  const tree = npmTree(t);
  const ran = launch(tree, ["--version"], cleanEnv(pathWith(tree.bin)));
  assert.equal(ran.status, 1, `${ran.signal ?? ""} ${ran.stderr}`);
  assert.equal(ran.stdout, "");
  assert.match(ran.stderr, /^mediagen-mock: no mediagen-mock binary for /);
  assert.match(ran.stderr, /mediagen-mock-\w+-\w+.* is not installed: npm leaves it out when optional dependencies are omitted/);
});
