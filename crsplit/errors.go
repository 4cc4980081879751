package crsplit

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/helmstore/helmstore/driver"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/cas"
)

var (
	// ErrCRDsNotInstalled is wrapped when the cluster does not serve the
	// helmstore.io resources: install them with InstallCRDs or
	// `kubectl apply -f` the YAML from CRDManifests.
	ErrCRDsNotInstalled = errors.New("the helmstore.io custom resource definitions are not installed in this cluster (install them with `helmstore crds install`, or `helmstore crds print | kubectl apply -f -`; from Go, crsplit.InstallCRDs)")

	// ErrConflict is wrapped when a write kept losing compare-and-swap
	// races to other writers until the retry policy gave up (an Update of
	// a release another store changed since does not: the last writer
	// wins). Nothing was written; retrying is safe.
	ErrConflict = cas.ErrConflict

	// ErrUnreachable is wrapped when the Kubernetes API server cannot be
	// reached (with driver.ErrUnavailable). It is never reported as
	// "release not found".
	ErrUnreachable = errors.New("cannot reach the Kubernetes API server")

	// ErrForbidden is wrapped when the API server denies a request (with
	// driver.ErrAccessDenied). The error keeps the server's message (user,
	// verb, resource, namespace).
	ErrForbidden = errors.New("permission denied (the crsplit kubeBackend needs the helmstore-crsplit Role in this namespace, or the ClusterRole for all namespaces: see crsplit.RBACManifests)")

	// ErrUnauthorized is wrapped when the API server does not accept the
	// store's credentials (401: an unknown or expired token, a client
	// certificate it does not trust), with driver.ErrAccessDenied.
	ErrUnauthorized = errors.New("the Kubernetes API server does not accept the credentials (an unknown or expired token, an untrusted client certificate): renew them in the kubeconfig")

	// ErrTooLarge is wrapped when an object would exceed MaxObjectBytes.
	ErrTooLarge = errors.New("object too large")
)

// objectMissing reports whether err says that the object name of resource
// res does not exist — not its namespace, and not the resource type itself
// (a cluster without the CRDs answers 404 too).
func objectMissing(err error, res, name string) bool {
	st, ok := apiStatus(err)
	if !ok || st.Reason != metav1.StatusReasonNotFound || st.Details == nil {
		return false
	}
	// The server's own message, not one client-go made up for a 404
	// without a Status body ("the server could not find the requested
	// resource", which a path nobody serves gets too).
	return st.Details.Name == name && st.Details.Kind == res && strings.Contains(st.Message, strconv.Quote(name)+" not found")
}

func apiStatus(err error) (metav1.Status, bool) {
	var se apierrors.APIStatus
	if err == nil || !errors.As(err, &se) {
		return metav1.Status{}, false
	}
	return se.Status(), true
}

// requestError explains a failed request. It keeps the API server's error
// in the chain (apierrors.IsForbidden and friends still work) and adds one
// of the sentinels above where one applies.
type requestError struct {
	verb, res, ns, name string
	kind                error // a sentinel, or nil
	// unavailable: the server could not be reached or answered with a
	// server failure (driver.ErrUnavailable).
	unavailable bool
	err         error
}

func (e *requestError) Error() string {
	what := e.res + "." + Group
	if e.name != "" {
		what += "/" + e.name
	}
	if e.ns != "" && e.name == "" {
		what += " in namespace " + e.ns
	}
	if e.kind != nil {
		return fmt.Sprintf("%s %s: %v: %v", e.verb, what, e.kind, e.err)
	}
	return fmt.Sprintf("%s %s: %v", e.verb, what, e.err)
}

func (e *requestError) Unwrap() []error {
	out := []error{e.err}
	if e.kind != nil {
		out = append(out, e.kind)
	}
	if e.kind == ErrForbidden || e.kind == ErrUnauthorized {
		out = append(out, driver.ErrAccessDenied)
	}
	if e.unavailable {
		out = append(out, driver.ErrUnavailable)
	}
	return out
}

// classify wraps err from a request; nil stays nil. Object-not-found and
// already-exists errors are returned with their status intact for callers
// to test with objectMissing and apierrors.IsAlreadyExists.
func classify(err error, verb, res, ns, name string) error {
	if err == nil {
		return nil
	}
	e := &requestError{verb: verb, res: res, ns: ns, name: name, err: err}
	st, ok := apiStatus(err)
	switch {
	case !ok:
		e.kind, e.unavailable = ErrUnreachable, true
	case st.Code >= 500 || st.Code == http.StatusTooManyRequests:
		// The server failed (or shed load), not the request.
		e.unavailable = true
	case st.Reason == metav1.StatusReasonForbidden:
		e.kind = ErrForbidden
	case st.Reason == metav1.StatusReasonUnauthorized:
		e.kind = ErrUnauthorized
	case st.Reason == metav1.StatusReasonNotFound && st.Details != nil && st.Details.Kind == "namespaces" && st.Details.Name != "" && st.Details.Name != name:
		e.err = fmt.Errorf("namespace %q does not exist: %w", st.Details.Name, err)
	case st.Reason == metav1.StatusReasonNotFound && (name == "" || !objectMissing(err, res, name)):
		// Not the object: the resource type itself is not served.
		e.kind = ErrCRDsNotInstalled
	case st.Reason == metav1.StatusReasonRequestEntityTooLarge:
		e.kind = ErrTooLarge
	}
	return e
}

func isConflict(err error) bool { return apierrors.IsConflict(err) }

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }
