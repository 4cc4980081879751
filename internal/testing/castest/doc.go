// Package castest is an in-memory cas.ObjectStore with injectable faults,
// for testing the no-transaction protocol of package cas and the backends
// built on it (crsplit, Cosmos DB).
//
// A Store is one process's connection to shared data. Each process runs a
// Plan that decides, call by call, whether the call runs normally, fails
// with nothing applied (Fail), is applied but loses its answer
// (LoseAnswer), kills the process before or after it (Crash, CrashAfter),
// or is answered from an out-of-date cache (Stale). A process that died
// fails every later call, from its background goroutines too, and another
// process over the same data (Store.Process) then sees, and cleans up,
// what it left. Plans are deterministic: At and CrashAt pick the n-th
// write; Random draws faults from a seed and the call's number.
//
// Scenarios (scenario.go) are the crash-point runs' Helm operations, with
// what a reader may see after each (States, Allowed) and the checks of
// what a reader finds once a writer failed or died amid them (Snapshot,
// Judge); CrashRun (crash.go) is the harness that runs one and checks
// it, over a Store or over a backend's own service. The protocol's tests
// that use them are package cas's own (cas/crash_test.go runs thousands of
// such crash points, cas/conformance_test.go the drivertest suite on a
// fault-free Store); this package's tests check the Store itself.
//
// For the tests of the backends on the protocol it also holds: Clock, a
// cas.Clock that retries without waiting and that a test moves forward
// instead of sleeping; Probe, a cas.Backend's hooks, object store and
// background commits (internal/casprobe); StuckCommit,
// LostAnswersThenRetry and DeadWriterPendingWindow, scenarios they share
// (stuck.go, pending.go); WireObjects, the records their golden JSON
// tests pin; and the JSON side of a Reshaper (jsonreshape.go, reshapes.go)
// with the checks of damaged data (checks.go).
package castest
