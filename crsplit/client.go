package crsplit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// client speaks JSON to the helmstore.io/v1 API. Every method returns the
// raw response object, and errors passed through classify.
type client struct {
	rc      *rest.RESTClient
	version string
}

// MaxObjectBytes bounds the serialized size of every object the backend
// writes (Kubernetes refuses objects over about 1.5 MiB, etcd requests
// over 1.5 MiB, and Secrets and ConfigMaps over 1 MiB).
const MaxObjectBytes = 900 << 10

func newClient(cfg *rest.Config) (*client, error) { return newClientVersion(cfg, Version) }

func newClientVersion(cfg *rest.Config, version string) (*client, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &schema.GroupVersion{Group: Group, Version: version}
	c.APIPath = "/apis"
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c.ContentType = runtime.ContentTypeJSON
	c.AcceptContentTypes = runtime.ContentTypeJSON
	if c.UserAgent == "" {
		c.UserAgent = "helmstore-crsplit " + rest.DefaultKubernetesUserAgent()
	}
	// A Helm operation is a handful of requests; client-go's default limit
	// (5 per second) would throttle them. An explicit QPS is honoured.
	if c.QPS == 0 && c.RateLimiter == nil {
		c.QPS = -1
	}
	// What crsplit stores is compressed already (zstd); gzip on top of its
	// base64 would cost the API server and the client more than it saves.
	c.DisableCompression = true
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &client{rc: rc, version: version}, nil
}

// body returns a response's body, or its error with the server's Status
// decoded (Result.Raw alone returns a generic error without it).
func body(r rest.Result) ([]byte, error) {
	if err := r.Error(); err != nil {
		return nil, err
	}
	return r.Raw()
}

// nameless returns, for a name no object can have (one client-go refuses
// to put in a request path: "..", or with a "/" or "%"), the API server's
// answer for an object that does not exist, so that a name made from
// damaged stored data (a chunk set id) reads as a missing object, not as
// an unreachable server; nil for any other name.
func nameless(res, name string) error {
	msgs := content.IsPathSegmentName(name)
	if len(msgs) == 0 {
		return nil
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Details: &metav1.StatusDetails{Group: Group, Kind: res, Name: name},
		Message: fmt.Sprintf("%s.%s %q not found: no object can have that name (%s)", res, Group, name, strings.Join(msgs, "; ")),
	}}
}

func (c *client) get(ctx context.Context, res, ns, name string) ([]byte, error) {
	if err := nameless(res, name); err != nil {
		return nil, classify(err, "get", res, ns, name)
	}
	b, err := body(c.rc.Get().Namespace(ns).Resource(res).Name(name).Do(ctx))
	return b, classify(err, "get", res, ns, name)
}

// read is get, or, when cached, a read from the API server's watch cache
// (resourceVersion=0: any version, no etcd read). A cached read may be
// stale or miss a new object, so it is only for content that never changes
// once written, digest-checked by the caller, with a miss read again by get.
func (c *client) read(ctx context.Context, res, ns, name string, cached bool) ([]byte, error) {
	if !cached {
		return c.get(ctx, res, ns, name)
	}
	if err := nameless(res, name); err != nil {
		return nil, classify(err, "get", res, ns, name)
	}
	b, err := body(c.rc.Get().Namespace(ns).Resource(res).Name(name).Param("resourceVersion", "0").Do(ctx))
	return b, classify(err, "get", res, ns, name)
}

// getMeta returns only the object's metadata.
func (c *client) getMeta(ctx context.Context, res, ns, name string) (*metav1.PartialObjectMetadata, error) {
	if err := nameless(res, name); err != nil {
		return nil, classify(err, "get", res, ns, name)
	}
	b, err := body(c.rc.Get().Namespace(ns).Resource(res).Name(name).SetHeader("Accept", acceptMetadata).Do(ctx))
	if err != nil {
		return nil, classify(err, "get", res, ns, name)
	}
	var m metav1.PartialObjectMetadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("get %s %s: decode: %w", res, name, err)
	}
	return &m, nil
}

// list returns every object of res in ns ("": all namespaces) matching
// opts, page by page.
func (c *client) list(ctx context.Context, res, ns string, opts metav1.ListOptions) ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := c.listPages(ctx, res, ns, opts, func(page []byte) (string, error) {
		var l objectList
		if err := json.Unmarshal(page, &l); err != nil {
			return "", err
		}
		out = append(out, l.Items...)
		return l.Continue, nil
	})
	return out, err
}

// listPages lists the objects of res in ns ("": all namespaces) matching
// opts, giving each page's body to decode, which returns the page's
// continue token ("" for the last) or why it does not decode.
func (c *client) listPages(ctx context.Context, res, ns string, opts metav1.ListOptions, decode func(page []byte) (string, error)) error {
	if opts.Limit == 0 {
		opts.Limit = 500
	}
	for {
		req := c.rc.Get().Namespace(ns).Resource(res).Param("limit", strconv.FormatInt(opts.Limit, 10))
		for k, v := range map[string]string{"labelSelector": opts.LabelSelector, "fieldSelector": opts.FieldSelector, "continue": opts.Continue, "resourceVersion": opts.ResourceVersion} {
			if v != "" {
				req = req.Param(k, v)
			}
		}
		b, err := body(req.Do(ctx))
		if err != nil {
			return classify(err, "list", res, ns, "")
		}
		cont, err := decode(b)
		if err != nil {
			return fmt.Errorf("list %s: decode: %w", res, err)
		}
		if cont == "" {
			return nil
		}
		opts.Continue = cont
		opts.ResourceVersion = "" // a continued list goes on at the first page's version
	}
}

// listMeta returns the metadata of every object of res in ns matching
// opts, page by page, without their content: as protobuf, which the API
// server encodes and the client decodes several times faster than JSON
// (JSON if the server answers with it).
func (c *client) listMeta(ctx context.Context, res, ns string, opts metav1.ListOptions) ([]metav1.PartialObjectMetadata, error) {
	var out []metav1.PartialObjectMetadata
	cont := ""
	for {
		req := c.rc.Get().Namespace(ns).Resource(res).Param("limit", "500").SetHeader("Accept", acceptMetadataList)
		for k, v := range map[string]string{"labelSelector": opts.LabelSelector, "fieldSelector": opts.FieldSelector, "continue": cont} {
			if v != "" {
				req = req.Param(k, v)
			}
		}
		b, err := body(req.Do(ctx))
		if err != nil {
			return nil, classify(err, "list", res, ns, "")
		}
		var l metav1.PartialObjectMetadataList
		if err := decodeMetaList(b, &l); err != nil {
			return nil, fmt.Errorf("list %s: decode: %w", res, err)
		}
		if out == nil {
			out = l.Items
		} else {
			out = append(out, l.Items...)
		}
		if cont = l.Continue; cont == "" {
			return out, nil
		}
	}
}

// acceptMetadataList asks the API server for a list of metadata only, in
// protobuf, else in JSON.
const acceptMetadataList = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," +
	"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

// protobufPrefix starts every protobuf body of the API server, followed by
// a runtime.Unknown holding the object.
var protobufPrefix = []byte("k8s\x00")

// decodeMetaList decodes b, a list of metadata in protobuf or JSON, into l.
func decodeMetaList(b []byte, l *metav1.PartialObjectMetadataList) error {
	if !bytes.HasPrefix(b, protobufPrefix) {
		return json.Unmarshal(b, l)
	}
	var u runtime.Unknown
	if err := u.Unmarshal(b[len(protobufPrefix):]); err != nil {
		return err
	}
	if u.ContentEncoding != "" {
		return fmt.Errorf("protobuf list with content encoding %q", u.ContentEncoding)
	}
	return l.Unmarshal(u.Raw)
}

func checkSize(body []byte, res, name string) error {
	if len(body) > MaxObjectBytes {
		return fmt.Errorf("%s %s: %w: %d bytes serialized, limit %d", res, name, ErrTooLarge, len(body), MaxObjectBytes)
	}
	return nil
}

// encodeObject returns obj's JSON, refused if over MaxObjectBytes.
func encodeObject(obj any, res, name string) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return data, checkSize(data, res, name)
}

func (c *client) create(ctx context.Context, res, ns, name string, obj any) ([]byte, error) {
	data, err := encodeObject(obj, res, name)
	if err != nil {
		return nil, err
	}
	b, err := body(c.rc.Post().Namespace(ns).Resource(res).Body(data).Do(ctx))
	return b, classify(err, "create", res, ns, name)
}

// createQuiet is create for an object whose stored form the caller does
// not need back: the server answers with its metadata only, sparing both
// sides the encoding of the whole object (a part's or a chunk's bytes).
func (c *client) createQuiet(ctx context.Context, res, ns, name string, obj any) (*metav1.PartialObjectMetadata, error) {
	data, err := encodeObject(obj, res, name)
	if err != nil {
		return nil, err
	}
	b, err := body(c.rc.Post().Namespace(ns).Resource(res).Body(data).SetHeader("Accept", acceptMetadata).Do(ctx))
	if err != nil {
		return nil, classify(err, "create", res, ns, name)
	}
	var m metav1.PartialObjectMetadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("create %s %s: decode: %w", res, name, err)
	}
	return &m, nil
}

// acceptMetadata asks the API server for an object's metadata only.
const acceptMetadata = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

func (c *client) update(ctx context.Context, res, ns, name string, obj any) ([]byte, error) {
	if err := nameless(res, name); err != nil {
		return nil, classify(err, "update", res, ns, name)
	}
	data, err := encodeObject(obj, res, name)
	if err != nil {
		return nil, err
	}
	b, err := body(c.rc.Put().Namespace(ns).Resource(res).Name(name).Body(data).Do(ctx))
	return b, classify(err, "update", res, ns, name)
}

func (c *client) patch(ctx context.Context, res, ns, name string, pt types.PatchType, patch any) ([]byte, error) {
	if err := nameless(res, name); err != nil {
		return nil, classify(err, "patch", res, ns, name)
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	b, err := body(c.rc.Patch(pt).Namespace(ns).Resource(res).Name(name).Body(data).Do(ctx))
	return b, classify(err, "patch", res, ns, name)
}

// delete removes an object; uid and rv, when set, are preconditions.
func (c *client) delete(ctx context.Context, res, ns, name string, uid types.UID, rv string) error {
	if err := nameless(res, name); err != nil {
		return classify(err, "delete", res, ns, name)
	}
	opts := map[string]any{"apiVersion": "v1", "kind": "DeleteOptions"}
	pre := map[string]any{}
	if uid != "" {
		pre["uid"] = uid
	}
	if rv != "" {
		pre["resourceVersion"] = rv
	}
	if len(pre) > 0 {
		opts["preconditions"] = pre
	}
	data, _ := json.Marshal(opts)
	err := c.rc.Delete().Namespace(ns).Resource(res).Name(name).Body(data).Do(ctx).Error()
	return classify(err, "delete", res, ns, name)
}

// resources returns the resource names the server serves in helmstore.io/v1.
func (c *client) resources(ctx context.Context) (map[string]bool, error) {
	var code int
	b, err := body(c.rc.Get().AbsPath("/apis", Group, c.version).Do(ctx).StatusCode(&code))
	if code == http.StatusNotFound {
		return nil, ErrCRDsNotInstalled
	}
	if err != nil {
		return nil, classify(err, "discover", "resources", "", "")
	}
	var l metav1.APIResourceList
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("discover %s: %w", apiVersion, err)
	}
	out := map[string]bool{}
	for _, r := range l.APIResources {
		out[r.Name] = true
	}
	return out, nil
}
