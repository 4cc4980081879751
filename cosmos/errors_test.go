package cosmos

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/helmstore/helmstore/helm3"
)

// The classification of the answers the test server never gives (it checks
// no key and has one region): a refused key or identity is
// driver.ErrAccessDenied; a 403 during a failover is unavailable; a full
// partition is neither.
func TestMapErrorStatuses(t *testing.T) {
	answer := func(code int, sub string) error {
		h := http.Header{}
		if sub != "" {
			h.Set("x-ms-substatus", sub)
		}
		req, _ := http.NewRequest(http.MethodPost, "https://account.documents.azure.com/dbs/helm/colls/releases/docs", nil)
		return runtime.NewResponseError(&http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader("{}")), Request: req})
	}
	for _, c := range []struct {
		code                int
		sub                 string
		denied, unavailable bool
	}{
		{401, "", true, false},
		{403, "", true, false},
		{403, "5300", true, false},  // an Azure AD identity without a data-plane role
		{403, "3", false, true},     // WriteForbidden: a failover
		{403, "1014", false, false}, // the logical partition is full
	} {
		err := mapError("create", "head x", answer(c.code, c.sub))
		if errors.Is(err, helm3.ErrAccessDenied) != c.denied || errors.Is(err, helm3.ErrUnavailable) != c.unavailable {
			t.Errorf("%d.%s: %v; want access denied %v, unavailable %v", c.code, c.sub, err, c.denied, c.unavailable)
		}
	}
}
