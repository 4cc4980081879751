package castest

// What the package's external tests (package castest_test) use of its
// unexported code.
var (
	CloneHead     = cloneHead
	EmbeddedFrame = embeddedFrame
)
