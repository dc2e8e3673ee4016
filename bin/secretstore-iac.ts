#!/usr/bin/env -S node --
import { runCli } from '../lib/cli/run-cli';

/** Resolves once everything written to `stream` so far has been handed to the OS. */
function drained(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write('', () => resolve()));
}

void runCli(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  isTerminal: process.stdout.isTTY === true,
  inheritStdio: true,
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
}).then(async (code) => {
  // Exit explicitly once the output is flushed (a large report piped on is never cut short): the
  // HCL parser's Go runtime, when it was needed, would otherwise keep the process up a while.
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  process.exit(code);
});
