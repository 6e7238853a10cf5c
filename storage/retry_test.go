package storage

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"deadlock from the driver", &mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"}, true},
		{"certification failure at COMMIT, after CleanError and a label", fmt.Errorf("Placement database: commit: %w", CleanError(&mysql.MySQLError{Number: 1213})), true},
		{"lock wait timeout", CleanError(&mysql.MySQLError{Number: 1205}), true},
		{"WSREP not ready", &mysql.MySQLError{Number: 1047, Message: "WSREP has not yet prepared node for application use"}, true},
		{"a generation compare-and-swap lost", fmt.Errorf("provider: %w", ErrRetry), true},
		{"duplicate key", CleanError(&mysql.MySQLError{Number: 1062}), false},
		{"unknown table", &mysql.MySQLError{Number: 1146}, false},
		{"plain error", errors.New("MySQL error 1213: but only text"), false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Retryable(tc.err); got != tc.want {
				t.Errorf("Retryable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// The waits oslo.db's wrap_db_retry draws: retry_interval first, then
// [0, 2^k s) capped at max_retry_interval.
func TestBackoffBounds(t *testing.T) {
	if d := backoff(1); d != time.Second {
		t.Errorf("first wait %v, want 1s", d)
	}
	for k := 2; k < RetryTries; k++ {
		limit := min(time.Second<<k, maxRetryInterval)
		for range 200 {
			if d := backoff(k); d < 0 || d > limit {
				t.Fatalf("wait before retry %d is %v, outside [0, %v]", k, d, limit)
			}
		}
	}
}

func TestRetryStopsOnOtherErrorsAndCancel(t *testing.T) {
	deadlock := &mysql.MySQLError{Number: 1213}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		errs  []error
		tries int
		want  error
	}{
		{"success first", context.Background(), []error{nil}, 1, nil},
		{"not retryable", context.Background(), []error{errors.New("bad value")}, 1, nil},
		{"cancelled context ends the waits", cancelled, []error{deadlock, nil}, 1, deadlock},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := Retry(tc.ctx, func() error {
				e := tc.errs[min(n, len(tc.errs)-1)]
				n++
				return e
			})
			if n != tc.tries {
				t.Errorf("%d tries, want %d", n, tc.tries)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err %v, want %v", err, tc.want)
			}
		})
	}
}
