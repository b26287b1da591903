// Package testproc checks that a test binary leaves no process behind.
//
// A test that starts a server (git daemon, git http-backend, a readproof
// child) must end it, and end what it started in turn: `git daemon` runs
// git-daemon as a child, so killing the `git` process alone leaves the
// daemon listening. [Run] wraps a package's tests: on Linux the test
// process becomes a child subreaper, so orphaned descendants are
// reparented to it rather than to init, and after the tests it fails the
// run if any descendant is still alive, naming and killing each. With
// TMPDIR unset it also gives the tests a scratch directory on a memory
// filesystem ([MemoryScratch]). [CopyTree] copies a fixture directory
// (a repository built once per test process) without a process;
// [LookPathBinary] finds a program past version-manager shims.
// [CopyLinkedExecutable], which Run calls, replaces the hard links of the
// test binary that testscript.Main puts on PATH with copies, which start
// faster (docs/startup.md, session 9). [Front] forwards to a test's git
// daemon without git://'s 40 ms delayed-ACK stalls. [DamageLoose] flips a
// byte of a loose object in place, as a disk error or an attacker would.
//
// It imports the standard library only and is imported by tests only.
package testproc
