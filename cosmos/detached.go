package cosmos

import (
	"context"
	"errors"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// The SDK reads the account properties (its global endpoint manager's
// "bootstrap") before the first request of a client, on a context detached
// from that request's (context.WithoutCancel) with a timeout of its own of
// 60 s, retried by the retry policy: through a connection that stops
// answering, Open's first request so waited some 40 s (four attempts of a
// TLS handshake that times out after 10 s each) whatever its deadline.
// Open binds its context (bindOpen), and boundPolicy, on every request
// carrying that binding, cancels the request when Open's context ends: the
// detached request keeps the binding, since a context detached from its
// cancellation keeps its values. Only Open's context is bound: after Open
// the SDK refreshes the account properties in the background (every 5
// minutes, and after an endpoint failure), which must outlive the
// operation that started it, and no operation waits for that.

// openKey is the context key of Open's binding: the value is Open's context.
type openKey struct{}

// bindOpen returns ctx carrying itself as the binding boundPolicy honours.
func bindOpen(ctx context.Context) context.Context {
	return context.WithValue(ctx, openKey{}, ctx)
}

// boundPolicy is the first per-call policy of the client: a request whose
// context carries Open's binding ends when Open's context does (with its
// deadline, so its error is context.DeadlineExceeded then).
type boundPolicy struct{}

func (boundPolicy) Do(req *policy.Request) (*http.Response, error) {
	ctx := req.Raw().Context()
	bound, ok := ctx.Value(openKey{}).(context.Context)
	if !ok || bound.Done() == nil {
		return req.Next()
	}
	var cancel context.CancelFunc
	if dl, ok := bound.Deadline(); ok {
		ctx, cancel = context.WithDeadline(ctx, dl)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel() // the pipeline has read the body by now (azcore's body download policy runs below)
	// Open's deadline passing ends ctx by its own deadline (so the request
	// fails with context.DeadlineExceeded, not context.Canceled); any other
	// end of Open's context cancels it.
	stop := context.AfterFunc(bound, func() {
		if !errors.Is(bound.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	defer stop()
	return req.WithContext(ctx).Next()
}
