// pgx_test.go -- pgx (github.com/jackc/pgx/v5, pinned in go.mod) against
// sluiced, run by tests/clients/test_pgx.py.
//
// TestCases reads the cases from SLUICE_CASES (JSON: name, user, password,
// tls, host, port, ca) and prints one JSON line per case:
//   {"case": NAME, "ok": true|false, "checks": [...], "error": "..."}
// Each case connects (TLS: sslmode=verify-full against the test CA) and runs
// the same queries in three of pgx's exec modes:
//   cache_statement  pgx's default: named prepared statements, Describe,
//                    binary parameters and results
//   exec             unnamed statements, parameter types from the Go values
//   simple_protocol  the simple protocol, parameters interpolated by pgx
// Every type used has a codec built into pgx, so pgx never asks pg_catalog
// (which sluice does not answer yet) about a type.
package pgxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

type testCase struct {
	Name     string `json:"name"`
	User     string `json:"user"`
	Password string `json:"password"`
	TLS      bool   `json:"tls"`
	Host     string `json:"host"`
	Port     int    `json:"port"`
	CA       string `json:"ca"`
}

type result struct {
	Case   string   `json:"case"`
	OK     bool     `json:"ok"`
	Checks []string `json:"checks,omitempty"`
	Error  string   `json:"error,omitempty"`
}

var modes = []struct {
	name string
	mode pgx.QueryExecMode
}{
	{"cache_statement", pgx.QueryExecModeCacheStatement},
	{"exec", pgx.QueryExecModeExec},
	{"simple_protocol", pgx.QueryExecModeSimpleProtocol},
}

func connect(ctx context.Context, c testCase, password string, mode pgx.QueryExecMode) (*pgx.Conn, error) {
	dsn := fmt.Sprintf("host=%s port=%d user=%s dbname=sluice connect_timeout=10", c.Host, c.Port, c.User)
	if c.TLS {
		dsn += " sslmode=verify-full sslrootcert=" + c.CA
	} else {
		dsn += " sslmode=disable"
	}
	if password != "" {
		dsn += " password=" + password
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = mode
	return pgx.ConnectConfig(ctx, cfg)
}

func sqlstate(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return "not a PgError: " + fmt.Sprint(err)
}

func check(cond bool, format string, args ...any) error {
	if !cond {
		return fmt.Errorf(format, args...)
	}
	return nil
}

// exercise runs the queries of one exec mode on conn.
func exercise(ctx context.Context, conn *pgx.Conn, mode string) error {
	var one int32
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		return fmt.Errorf("SELECT 1: %v %v", one, err)
	}
	var (
		i2  int16
		i4  int32
		i8  int64
		f4  float32
		f8  float64
		b   bool
		txt string
		num pgtype.Numeric
	)
	want := pgtype.Numeric{Int: big.NewInt(12345), Exp: -3, Valid: true}
	err := conn.QueryRow(ctx,
		"SELECT $1::int2, $2::int4, $3::int8, $4::float4, $5::float8, $6::bool, $7::text, $8::numeric",
		int16(7), int32(-42), int64(9000000000), float32(1.5), float64(2.25), true, "héllo", want,
	).Scan(&i2, &i4, &i8, &f4, &f8, &b, &txt, &num)
	if err != nil {
		return fmt.Errorf("typed params: %w", err)
	}
	numText, _ := num.Value()
	if e := check(i2 == 7 && i4 == -42 && i8 == 9000000000 && f4 == 1.5 && f8 == 2.25 && b &&
		txt == "héllo" && numText == "12.345", "typed values: %v %v %v %v %v %v %q %v",
		i2, i4, i8, f4, f8, b, txt, numText); e != nil {
		return e
	}
	for i := int32(0); i < 3; i++ {
		var n int32
		var s string
		if err := conn.QueryRow(ctx, "SELECT $1::int4 + 1, 'x' || $2::text", i, fmt.Sprint(i)).Scan(&n, &s); err != nil {
			return fmt.Errorf("repeated statement: %w", err)
		}
		if e := check(n == i+1 && s == fmt.Sprintf("x%d", i), "repeated: %d %q", n, s); e != nil {
			return e
		}
	}
	// Arrays: pgx sends and reads them in the binary format (array_send's layout).
	var arr []int32
	var tarr []string
	var withNull []*int32
	if err := conn.QueryRow(ctx, "SELECT $1::int4[], $2::text[], ARRAY[7, NULL]",
		[]int32{1, -2, 3}, []string{"a b", `c"d`, ""}).Scan(&arr, &tarr, &withNull); err != nil {
		return fmt.Errorf("arrays: %w", err)
	}
	if e := check(len(arr) == 3 && arr[0] == 1 && arr[1] == -2 && arr[2] == 3 &&
		len(tarr) == 3 && tarr[0] == "a b" && tarr[1] == `c"d` && tarr[2] == "" &&
		len(withNull) == 2 && withNull[0] != nil && *withNull[0] == 7 && withNull[1] == nil,
		"arrays: %v %q %v", arr, tarr, withNull); e != nil {
		return e
	}
	if _, err := conn.Exec(ctx, "SELECT 1/0"); sqlstate(err) != "22012" {
		return fmt.Errorf("1/0: %v", err)
	}
	var x int32
	if err := conn.QueryRow(ctx, "SELECT $1::int4 / 0", int32(1)).Scan(&x); sqlstate(err) != "22012" {
		return fmt.Errorf("$1/0: %v", err)
	}
	if _, err := conn.Exec(ctx, "SELEC 1"); sqlstate(err) != "42601" {
		return fmt.Errorf("syntax error: %v", err)
	}
	if err := conn.QueryRow(ctx, "SELECT $1::int8", int64(5)).Scan(&i8); err != nil || i8 != 5 {
		return fmt.Errorf("after errors: %v %v", i8, err)
	}
	// A transaction, and a failed one: 25P02 until ROLLBACK.
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1/0"); sqlstate(err) != "22012" {
		return fmt.Errorf("1/0 in tx: %v", err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); sqlstate(err) != "25P02" {
		return fmt.Errorf("in failed tx: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	if mode == "cache_statement" {
		// A batch: many Parse/Bind/Execute in one round trip before Sync.
		batch := &pgx.Batch{}
		for i := 0; i < 50; i++ {
			batch.Queue("SELECT $1::int4 * 2", int32(i))
		}
		br := conn.SendBatch(ctx, batch)
		for i := int32(0); i < 50; i++ {
			var v int32
			if err := br.QueryRow().Scan(&v); err != nil || v != i*2 {
				br.Close()
				return fmt.Errorf("batch %d: %v %v", i, v, err)
			}
		}
		if err := br.Close(); err != nil {
			return fmt.Errorf("batch close: %w", err)
		}
	}
	return nil
}

func runCase(c testCase) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var checks []string
	for _, m := range modes {
		conn, err := connect(ctx, c, c.Password, m.mode)
		if err != nil {
			return checks, fmt.Errorf("%s: connect: %w", m.name, err)
		}
		err = exercise(ctx, conn, m.name)
		conn.Close(ctx)
		if err != nil {
			return checks, fmt.Errorf("%s: %w", m.name, err)
		}
		checks = append(checks, m.name)
	}
	return checks, nil
}

func wrongPassword(c testCase) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := connect(ctx, c, "wrong", pgx.QueryExecModeCacheStatement)
	if err == nil {
		conn.Close(ctx)
		return nil, errors.New("connected with a wrong password")
	}
	if code := sqlstate(err); code != "28P01" {
		return nil, fmt.Errorf("wrong password: %v", err)
	}
	return []string{"refused"}, nil
}

// cancelCase: PgConn.CancelRequest from another goroutine ends a running
// statement with 57014 and the connection goes on.  The request is sent
// again until the statement ends: one that comes before the statement
// started does nothing, as in PostgreSQL.
func cancelCase(c testCase) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := connect(ctx, c, c.Password, pgx.QueryExecModeExec)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(300 * time.Millisecond):
				_ = conn.PgConn().CancelRequest(ctx)
			}
		}
	}()
	_, err = conn.Exec(ctx, "SELECT pg_sleep(60)")
	close(done)
	if code := sqlstate(err); code != "57014" {
		return nil, fmt.Errorf("cancel: want 57014, got %v", err)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
		return nil, fmt.Errorf("after cancel: %v", err)
	}
	// A context that ends also cancels (pgx sends a CancelRequest).
	short, stop := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = conn.Exec(short, "SELECT pg_sleep(60)")
	stop()
	if err == nil {
		return nil, errors.New("context cancel: the statement was not interrupted")
	}
	return []string{"cancel"}, nil
}

// copyCase: Conn.CopyFrom (binary), PgConn.CopyFrom (CSV) and CopyTo (COPY TO STDOUT).
func copyCase(c testCase) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := connect(ctx, c, c.Password, pgx.QueryExecModeExec)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE pgx_copy (id BIGINT PRIMARY KEY, name TEXT)"); err != nil {
		return nil, err
	}
	// pgx.Conn.CopyFrom: the binary COPY format, typed values
	rows := make([][]any, 1000)
	for i := range rows {
		rows[i] = []any{int64(i), fmt.Sprintf("name %d", i)}
	}
	bn, err := conn.CopyFrom(ctx, pgx.Identifier{"pgx_copy"}, []string{"id", "name"},
		pgx.CopyFromRows(rows))
	if err != nil {
		return nil, fmt.Errorf("CopyFrom (binary): %w", err)
	}
	if bn != 1000 {
		return nil, fmt.Errorf("CopyFrom (binary) copied %d rows", bn)
	}
	if _, err := conn.Exec(ctx, "DELETE FROM pgx_copy"); err != nil {
		return nil, err
	}
	// PgConn.CopyFrom streams text or CSV
	var in bytes.Buffer
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&in, "%d,name %d\n", i, i)
	}
	tag, err := conn.PgConn().CopyFrom(ctx, &in, "COPY pgx_copy FROM STDIN WITH (FORMAT csv)")
	if err != nil {
		return nil, fmt.Errorf("CopyFrom: %w", err)
	}
	if tag.RowsAffected() != 1000 {
		return nil, fmt.Errorf("CopyFrom copied %d rows", tag.RowsAffected())
	}
	var buf bytes.Buffer
	if _, err := conn.PgConn().CopyTo(ctx, &buf,
		"COPY (SELECT id, name FROM pgx_copy WHERE id < 2 ORDER BY id) TO STDOUT"); err != nil {
		return nil, fmt.Errorf("CopyTo: %w", err)
	}
	if buf.String() != "0\tname 0\n1\tname 1\n" {
		return nil, fmt.Errorf("CopyTo gave %q", buf.String())
	}
	if _, err := conn.Exec(ctx, "DROP TABLE pgx_copy"); err != nil {
		return nil, err
	}
	return []string{"copy"}, nil
}

func TestCases(t *testing.T) {
	var cases []testCase
	if err := json.Unmarshal([]byte(os.Getenv("SLUICE_CASES")), &cases); err != nil {
		t.Fatalf("SLUICE_CASES: %v", err)
	}
	for _, c := range cases {
		type job struct {
			name string
			fn   func(testCase) ([]string, error)
		}
		jobs := []job{{c.Name, runCase}}
		if c.Password != "" && !c.TLS {
			jobs = append(jobs, job{c.Name + "-wrong-password", wrongPassword})
		}
		if c.Password == "" && !c.TLS {
			jobs = append(jobs, job{c.Name + "-cancel", cancelCase})
			jobs = append(jobs, job{c.Name + "-copy", copyCase})
		}
		for _, j := range jobs {
			checks, err := j.fn(c)
			r := result{Case: j.name, OK: err == nil, Checks: checks}
			if err != nil {
				r.Error = err.Error()
			}
			line, _ := json.Marshal(r)
			fmt.Println(string(line))
		}
	}
}
