package sqlenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/helmstore/helmstore/internal/testing/testenv"
)

var errNoDocker = errors.New("no Docker engine answers")

var (
	dockerOnce sync.Once
	dockerOK   bool
)

// dockerAvailable reports whether a Docker engine answers (not just a
// docker client being installed).
func dockerAvailable() bool {
	dockerOnce.Do(func() {
		p, err := testcontainers.NewDockerProvider()
		if err != nil {
			return
		}
		defer p.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		dockerOK = p.Health(ctx) == nil
	})
	return dockerOK
}

// container describes a service image to run with testcontainers.
type container struct {
	image string
	port  string // e.g. "5432/tcp"
	env   map[string]string
	wait  wait.Strategy
}

// startContainer runs c and returns its host:port. Containers are removed
// by testcontainers' reaper when the test process exits.
func startContainer(c container) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{Image: c.image, ExposedPorts: []string{c.port}, Env: c.env, WaitingFor: c.wait},
		Started:          true,
	})
	if err != nil {
		return "", fmt.Errorf("testcontainers %s: %w", c.image, err)
	}
	host, err := ctr.Host(ctx)
	if err != nil {
		return "", err
	}
	port, err := ctr.MappedPort(ctx, c.port)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s:%s", host, port.Port()), nil
}

func postgresContainer() (string, error) {
	addr, err := startContainer(container{image: "postgres:16-alpine", port: "5432/tcp",
		env:  map[string]string{"POSTGRES_PASSWORD": "helm", "POSTGRES_DB": "test"},
		wait: wait.ForLog("database system is ready to accept connections").WithOccurrence(2).WithStartupTimeout(3 * time.Minute)})
	if err != nil {
		return "", err
	}
	u := "postgres://postgres:helm@" + addr + "/test?sslmode=disable"
	return u, pingPostgres(u)
}

func mysqlContainer(image string) (string, error) {
	addr, err := startContainer(container{image: image, port: "3306/tcp",
		env:  map[string]string{"MYSQL_ROOT_PASSWORD": "helm", "MARIADB_ROOT_PASSWORD": "helm"},
		wait: wait.ForListeningPort("3306/tcp").WithStartupTimeout(3 * time.Minute)})
	if err != nil {
		return "", err
	}
	dsn := "root:helm@tcp(" + addr + ")/"
	return dsn, pingMySQL(dsn)
}

// MySQL8Env names a MySQL 8 server for tests (DSN without a database).
const MySQL8Env = "HELMSTORE_TEST_MYSQL8"

var (
	my8Once sync.Once
	my8DSN  string
	my8Err  error
)

// MySQL8 returns a fresh database on a MySQL 8 server: HELMSTORE_TEST_MYSQL8,
// else a mysql:8.4 container where a Docker engine runs. MySQL 8 is tested in
// addition to the MariaDB every machine has, so without either t is skipped
// even when services are required.
func MySQL8(t testing.TB) string {
	t.Helper()
	my8Once.Do(func() {
		if my8DSN = os.Getenv(MySQL8Env); my8DSN != "" {
			my8Err = pingMySQL(my8DSN)
			return
		}
		if !dockerAvailable() {
			my8Err = errNoDocker
			return
		}
		my8DSN, my8Err = mysqlContainer("mysql:8.4")
	})
	if my8Err == errNoDocker {
		// The one skip HELMSTORE_REQUIRE_SERVICES=1 allows: MariaDB, which
		// every machine of this project has, is the required MySQL-family
		// server.
		t.Skipf("MySQL 8 is tested only where a Docker engine runs (testcontainers starts mysql:8.4) or at %s=<DSN without database>: no Docker engine answers here and %s is not set. "+
			"This is the one skip %s=1 allows: MariaDB is the required MySQL-family server, tested by TestConformanceMySQL", MySQL8Env, MySQL8Env, testenv.RequireEnv)
	}
	if my8Err != nil {
		testenv.Unavailable(t, "MySQL 8", my8Err)
	}
	return freshMySQLDatabase(t, my8DSN)
}
