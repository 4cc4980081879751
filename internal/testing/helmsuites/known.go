package helmsuites

// knownFailure is a test of Helm's that fails on helmstore's stores and
// not on Helm's Secrets driver, for a reason we know and mean to fix. It
// applies to every one of our stores (ourStores) in its suite, and holds
// only while the test fails there, not on Secrets, with a reason that
// contains match.
type knownFailure struct {
	suite string // Helm's package: "helm.sh/helm/v3/pkg/action"
	test  string // the test's full name, subtests included ("TestX/sub")
	cause string // why, and where it is to be fixed
	match string // what the failure's reason on our stores contains
}

// The causes of the known failures, each to be fixed in helmstore; when
// one is, its tests come off the list (TestHelmSuites fails until they
// do, or fail for another reason than their match says).
const (
	// causeNamespace: a store scoped to one namespace refuses a release
	// whose own Namespace is another; Helm's Secrets driver stores it in
	// the driver's namespace whatever the release says. Helm's install
	// tests install into namespace "spaced" with the fixture's store
	// scoped to "default".
	causeNamespace = "known, ours, issue 43: a store scoped to namespace \"default\" refuses a release whose Namespace is another"
	// causeSentinel: Get, Delete, Create and Update return errors that wrap
	// ErrReleaseNotFound and ErrReleaseExists, where Helm compares with ==.
	causeSentinel = "known, ours, issue 43: the error wraps driver.ErrReleaseNotFound/ErrReleaseExists, and Helm compares with =="
	// causeNamespaceThenSentinel: causeNamespace today; with it fixed,
	// causeSentinel (measured with the fixture's store over all
	// namespaces, Namespace(""), where Helm's test then reports "Not
	// equal: expected: *driver.ReleaseError(...) actual: ... release: not
	// found").
	causeNamespaceThenSentinel = causeNamespace + "; behind it, " + causeSentinel
)

// What the failures' reasons contain, by cause: the store's refusal
// itself, or (where Helm's test checks a failed release's description)
// the description of a release whose update to failed was refused.
const (
	matchScoped   = "this store is scoped to namespace"
	matchUnderway = `"Initial install underway" does not contain`
)

// Helm's packages whose tests run.
const (
	v3action = "helm.sh/helm/v3/pkg/action"
	v4action = "helm.sh/helm/v4/pkg/action"
)

// knownFailures is the list: every test of Helm's that fails on our stores
// and not on Helm's Secrets driver. Edit it here, and only here.
var knownFailures = join(
	known(v3action, causeNamespace, matchScoped,
		"TestInstallOutputDirWithReleaseName",
		"TestInstallRelease",
		"TestInstallReleaseOutputDir",
		"TestInstallReleaseWithTakeOwnership_ResourceNotOwned",
		"TestInstallReleaseWithTakeOwnership_ResourceOwned",
		"TestInstallReleaseWithValues",
		"TestInstallRelease_HookOutputLogsOnSuccess",
		"TestInstallRelease_HooksOutputLogsOnSuccessAndFailure",
		"TestInstallRelease_KubeVersion",
		"TestInstallRelease_NoHooks",
		"TestInstallRelease_ReplaceRelease",
		"TestInstallRelease_WithChartAndDependencyAllNotes",
		"TestInstallRelease_WithChartAndDependencyParentNotes",
		"TestInstallRelease_WithNotes",
		"TestInstallRelease_WithNotesRendered",
		"TestInstallWithLabels",
	),
	known(v3action, causeNamespace, matchUnderway,
		"TestInstallRelease_FailedHooks",
		"TestInstallRelease_HookOutputLogsOnFailure",
		"TestInstallRelease_WaitForJobs",
	),
	known(v3action, causeNamespaceThenSentinel, matchScoped,
		"TestInstallRelease_Atomic",
		"TestInstallRelease_Atomic_Interrupted",
	),
	known(v4action, causeNamespace, matchScoped,
		"TestInstallOutputDirWithReleaseName",
		"TestInstallRelease",
		"TestInstallReleaseOutputDir",
		"TestInstallReleaseWithTakeOwnership_ResourceNotOwned",
		"TestInstallReleaseWithTakeOwnership_ResourceOwned",
		"TestInstallReleaseWithValues",
		"TestInstallRelease_DryRun_Lookup",
		"TestInstallRelease_HookOutputLogsOnSuccess",
		"TestInstallRelease_HooksOutputLogsOnSuccessAndFailure",
		"TestInstallRelease_KubeVersion",
		"TestInstallRelease_NoHooks",
		"TestInstallRelease_ReplaceRelease",
		"TestInstallRelease_RollbackOnFailure/rollback-on-failure_uninstall_fails",
		"TestInstallRelease_WaitOptionsPassedDownstream",
		"TestInstallRelease_Wait_Interrupted",
		"TestInstallRelease_WithChartAndDependencyAllNotes",
		"TestInstallRelease_WithChartAndDependencyParentNotes",
		"TestInstallRelease_WithNotes",
		"TestInstallRelease_WithNotesRendered",
		"TestInstallWithLabels",
	),
	known(v4action, causeNamespace, matchUnderway,
		"TestInstallRelease_FailedHooks",
		"TestInstallRelease_HookOutputLogsOnFailure",
		"TestInstallRelease_Wait",
		"TestInstallRelease_WaitForJobs",
	),
	known(v4action, causeNamespaceThenSentinel, matchScoped,
		"TestInstallRelease_RollbackOnFailure/rollback-on-failure_uninstall_succeeds",
		"TestInstallRelease_RollbackOnFailure_Interrupted",
	),
)

// flakyTest is a test of Helm's whose outcome depends on timing, on any
// driver: its failures are reported ("flaky, not judged") and never fail
// TestHelmSuites, and it is in no other list.
type flakyTest struct {
	suite, test string
	why         string
}

// whyGoroutines: the test compares runtime.NumGoroutine() before and after
// an install (Helm 3 only), which fails now and then on a busy machine on
// Helm's own Secrets driver, and more often on our stores, which start and
// end goroutines of their own. Today it fails on our stores for
// causeNamespace first.
const whyGoroutines = "flaky: the test counts goroutines (runtime.NumGoroutine), which a busy machine or a store's own goroutines change; today it fails on ours for causeNamespace first"

// flakyTests are the tests of Helm's that are not judged. Edit them here.
var flakyTests = []flakyTest{
	{v3action, "TestInstallRelease_Wait", whyGoroutines},
	{v3action, "TestInstallRelease_Wait_Interrupted", whyGoroutines},
}

// known returns the known failures of tests of suite, for cause, each
// with a reason that contains match.
func known(suite, cause, match string, tests ...string) []knownFailure {
	out := make([]knownFailure, len(tests))
	for i, t := range tests {
		out[i] = knownFailure{suite: suite, test: t, cause: cause, match: match}
	}
	return out
}

// join returns the lists one after another.
func join(lists ...[]knownFailure) []knownFailure {
	var out []knownFailure
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
