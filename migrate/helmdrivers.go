package migrate

import (
	"bytes"
	"compress/gzip"
	"context"
	stdsql "database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", for the listing of Helm's SQL table
	"helm.sh/helm/v4/pkg/release"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
)

// helmStore is one of Helm's own drivers (Secrets, ConfigMaps or SQL), one
// driver per namespace, as Helm scopes them, with a listing of its own
// that reads the index of stored revisions (object labels, SQL columns)
// and no release body.
type helmStore struct {
	name string
	// driver returns Helm's driver for a namespace.
	driver func(ns string) (helmdriver.Driver, error)
	// list lists the revisions of ns ("" every one) named name ("" any).
	list func(ctx context.Context, ns, name string) ([]Revision, error)
	// stored is what the store holds of the releases of ns ("": all).
	stored func(ctx context.Context, ns string) (int64, error)
	close  func() error

	mu      sync.Mutex
	drivers map[string]helmdriver.Driver
}

func (s *helmStore) Name() string { return s.name }

func (s *helmStore) Revisions(ctx context.Context, ns, name string) ([]Revision, error) {
	return s.list(ctx, ns, name)
}

func (s *helmStore) in(ns string) (helmdriver.Driver, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.drivers[ns]; ok {
		return d, nil
	}
	d, err := s.driver(ns)
	if err != nil {
		return nil, err
	}
	if s.drivers == nil {
		s.drivers = map[string]helmdriver.Driver{}
	}
	s.drivers[ns] = d
	return d, nil
}

func (s *helmStore) Get(_ context.Context, r Revision) (*rspb.Release, error) {
	d, err := s.in(r.Namespace)
	if err != nil {
		return nil, err
	}
	rel, err := d.Get(r.Key())
	if err != nil {
		return nil, err
	}
	return v1(rel)
}

func (s *helmStore) Create(_ context.Context, ns string, rls *rspb.Release) error {
	d, err := s.in(ns)
	if err != nil {
		return err
	}
	return d.Create(revisionIn(ns, rls).Key(), rls)
}

func (s *helmStore) Update(_ context.Context, ns string, rls *rspb.Release) error {
	d, err := s.in(ns)
	if err != nil {
		return err
	}
	return d.Update(revisionIn(ns, rls).Key(), rls)
}

func (s *helmStore) Delete(_ context.Context, r Revision) error {
	d, err := s.in(r.Namespace)
	if err != nil {
		return err
	}
	_, err = d.Delete(r.Key())
	return err
}

// StoredBytes is what Helm's driver stores of the releases of namespace
// ns ("": every namespace): the size of the SQL bodies, or of the release
// data of the Secrets or ConfigMaps this store has read or written.
func (s *helmStore) StoredBytes(ctx context.Context, ns string) (int64, error) {
	return s.stored(ctx, ns)
}

func (s *helmStore) Close() error {
	if s.close != nil {
		return s.close()
	}
	return nil
}

// v1 returns the Helm 4 v1 release a Helm 4 driver returned.
func v1(rel release.Releaser) (*rspb.Release, error) {
	switch r := rel.(type) {
	case *rspb.Release:
		return r, nil
	case rspb.Release:
		return &r, nil
	}
	return nil, fmt.Errorf("a Helm driver returned a %T, not a v1 release", rel)
}

// HelmEncodedSize is the size of what Helm's Secrets, ConfigMaps and SQL
// drivers store of rls: its JSON, gzip'd at the best compression and
// base64'd.
func HelmEncodedSize(rls *rspb.Release) (int64, error) {
	b, err := json.Marshal(rls)
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return 0, err
	}
	if _, err := w.Write(b); err != nil {
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return int64(base64.StdEncoding.EncodedLen(buf.Len())), nil
}

// kubeStore is Helm's Secrets or ConfigMaps driver (resource "secrets" or
// "configmaps"), listed through the metadata API: labels only, no data.
func kubeStore(name, resource string, cs kubernetes.Interface, md metadata.Interface) *helmStore {
	seen := new(sizes)
	return &helmStore{
		name: name,
		driver: func(ns string) (helmdriver.Driver, error) {
			if resource == "secrets" {
				return helmdriver.NewSecrets(secretSizes{cs.CoreV1().Secrets(ns), ns, seen}), nil
			}
			return helmdriver.NewConfigMaps(configMapSizes{cs.CoreV1().ConfigMaps(ns), ns, seen}), nil
		},
		stored: func(_ context.Context, ns string) (int64, error) { return seen.total(ns), nil },
		list: func(ctx context.Context, ns, name string) ([]Revision, error) {
			sel := "owner=helm"
			if name != "" {
				sel += ",name=" + name
			}
			gvr := schema.GroupVersionResource{Version: "v1", Resource: resource}
			var out []Revision
			opts := metav1.ListOptions{LabelSelector: sel, Limit: 500}
			for {
				l, err := md.Resource(gvr).Namespace(ns).List(ctx, opts)
				if err != nil {
					return nil, err
				}
				for _, o := range l.Items {
					v, err := strconv.Atoi(o.Labels["version"])
					if err != nil || o.Labels["name"] == "" {
						return nil, fmt.Errorf("%s %s/%s: a Helm release object without name and version labels", resource, o.Namespace, o.Name)
					}
					out = append(out, Revision{Namespace: o.Namespace, Name: o.Labels["name"], Version: v, Status: o.Labels["status"]})
				}
				if l.Continue == "" {
					return out, nil
				}
				opts.Continue = l.Continue
			}
		},
	}
}

// sqlStore is Helm's SQL driver (PostgreSQL) on conn, listed with one
// query of its releases table's index columns.
func sqlStore(conn string) (*helmStore, error) {
	db, err := stdsql.Open("pgx", conn)
	if err != nil {
		return nil, fmt.Errorf("sql: %w", err)
	}
	return &helmStore{
		name: "sql",
		driver: func(ns string) (helmdriver.Driver, error) {
			return helmdriver.NewSQL(conn, ns)
		},
		list: func(ctx context.Context, ns, name string) ([]Revision, error) {
			rows, err := db.QueryContext(ctx, `SELECT namespace, name, version, status FROM releases_v1
				WHERE owner = 'helm' AND ($1 = '' OR namespace = $1) AND ($2 = '' OR name = $2)`, ns, name)
			if err != nil {
				if isUndefinedTable(err) {
					return nil, nil // Helm's driver has not created its tables: nothing stored
				}
				return nil, err
			}
			defer rows.Close()
			var out []Revision
			for rows.Next() {
				var r Revision
				if err := rows.Scan(&r.Namespace, &r.Name, &r.Version, &r.Status); err != nil {
					return nil, err
				}
				out = append(out, r)
			}
			return out, rows.Err()
		},
		stored: func(ctx context.Context, ns string) (int64, error) {
			var n int64
			err := db.QueryRowContext(ctx, `SELECT coalesce(sum(length(body)), 0) FROM releases_v1 WHERE owner = 'helm' AND ($1 = '' OR namespace = $1)`, ns).Scan(&n)
			if isUndefinedTable(err) {
				return 0, nil
			}
			return n, err
		},
		close: db.Close,
	}, nil
}

// isUndefinedTable reports PostgreSQL's "relation does not exist".
func isUndefinedTable(err error) bool {
	var pe interface{ SQLState() string }
	return errors.As(err, &pe) && pe.SQLState() == "42P01"
}
