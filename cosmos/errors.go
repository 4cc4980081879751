package cosmos

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/helmstore/helmstore/driver"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/helmstore/helmstore/cas"
)

// ErrUnavailable is wrapped by errors of a Cosmos DB account that could not
// be reached or answered with a transport or server failure (5xx, or 429
// until the operation's deadline): never "not found".
var ErrUnavailable = fmt.Errorf("%w: the Cosmos DB account did not answer", driver.ErrUnavailable)

// substatusOwnerMissing is Cosmos DB's sub-status of a 404 for a missing
// database or container (as opposed to a missing item).
const substatusOwnerMissing = "1003"

// Sub-statuses of a 403 that are not a refused credential: a write to a
// region that stopped taking writes (a failover in progress), and a logical
// partition at its maximum size.
const (
	substatusWriteForbidden = "3"
	substatusPartitionFull  = "1014"
)

// statusOf returns the HTTP status and sub-status of a Cosmos DB error, or
// 0 if err is not a response.
func statusOf(err error) (int, string) {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		sub := ""
		if re.RawResponse != nil {
			sub = re.RawResponse.Header.Get("x-ms-substatus")
		}
		return re.StatusCode, sub
	}
	return 0, ""
}

// mapError turns an error of a call on the object what into the protocol's
// sentinels (404 item: cas.ErrNotFound, 409: cas.ErrExists, 412:
// cas.ErrVersionMismatch, 401 and 403: driver.ErrAccessDenied) or a
// described error; transport and server
// failures, and a deadline passed waiting for the account, wrap
// ErrUnavailable. The SDK's error text (which quotes the
// request URL and the service's message, never the key) is kept.
func mapError(op, what string, err error) error {
	if err == nil {
		return nil
	}
	code, sub := statusOf(err)
	switch {
	case code == http.StatusNotFound && sub != substatusOwnerMissing:
		return fmt.Errorf("cosmos %s %s: %w", op, what, cas.ErrNotFound)
	case code == http.StatusNotFound:
		return fmt.Errorf("cosmos %s %s: the database or container does not exist (%s)", op, what, brief(err))
	case code == http.StatusConflict:
		return fmt.Errorf("cosmos %s %s: %w", op, what, cas.ErrExists)
	case code == http.StatusPreconditionFailed:
		return fmt.Errorf("cosmos %s %s: %w", op, what, cas.ErrVersionMismatch)
	case code == http.StatusForbidden && sub == substatusWriteForbidden:
		// A write sent to a region that stopped taking writes during a
		// failover: the SDK moves to the new write region.
		return fmt.Errorf("cosmos %s %s: %w: the region no longer takes writes (a failover): %s", op, what, ErrUnavailable, brief(err))
	case code == http.StatusForbidden && sub == substatusPartitionFull:
		return fmt.Errorf("cosmos %s %s: the logical partition (the namespace's) has reached Cosmos DB's maximum size (%s)", op, what, brief(err))
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		// A key the account refuses, an Azure AD identity without a
		// data-plane role, a firewall rule: a setting to fix.
		return fmt.Errorf("cosmos %s %s: %w (%s)", op, what, driver.ErrAccessDenied, brief(err))
	case code == http.StatusRequestEntityTooLarge:
		return fmt.Errorf("cosmos %s %s: the item is larger than Cosmos DB accepts (%s)", op, what, brief(err))
	case code == http.StatusTooManyRequests || code >= 500 || code == http.StatusRequestTimeout:
		return fmt.Errorf("cosmos %s %s: %w: %s", op, what, ErrUnavailable, brief(err))
	case code != 0:
		return fmt.Errorf("cosmos %s %s: %s", op, what, brief(err))
	case errors.Is(err, context.DeadlineExceeded):
		// No answer in time: a 429 storm (the SDK's retry policy reports
		// the deadline, not the last 429), a hung connection.
		return fmt.Errorf("cosmos %s %s: %w, not within the operation's deadline: %w", op, what, ErrUnavailable, err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("cosmos %s %s: %w", op, what, err)
	default:
		return fmt.Errorf("cosmos %s %s: %w: %w", op, what, ErrUnavailable, err)
	}
}

// brief is the first line of a response error (the SDK's text runs over
// many lines).
func brief(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprintf("HTTP %d %s", re.StatusCode, re.ErrorCode)
	}
	return err.Error()
}
