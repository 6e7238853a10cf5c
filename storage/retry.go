package storage

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The whole-transaction retry of oslo.db's
// wrap_db_retry(max_retries=5, retry_on_deadlock=True), the decorator Nova
// and Placement put on their writers (oslo_db/api.py): 5 retries after the
// first try (6 tries in all); the first wait is retry_interval (1 s), each
// later one is drawn uniformly from [0, 2^k s) with k the retry number
// (jitter, which oslo.db always applies to a deadlock), capped at
// max_retry_interval (10 s). Worst case about 25 s of waiting.
const (
	RetryTries        = 6
	retryInterval     = time.Second
	maxRetryInterval  = 10 * time.Second
	errDeadlock       = 1213 // also Galera's certification failure, at COMMIT
	errLockWait       = 1205
	errWsrepNotReady  = 1047 // "WSREP has not yet prepared node for application use"
	errDuplicateEntry = 1062
)

// DBError is a server error cut to the line an operator needs (CleanError);
// it keeps the server's error number so that callers can still tell a
// deadlock or a duplicate key from other failures.
type DBError struct {
	Number uint16
	Msg    string
}

func (e *DBError) Error() string { return e.Msg }

// errNumber is the MySQL error number in err's chain, or 0.
func errNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	var de *DBError
	if errors.As(err, &de) {
		return de.Number
	}
	return 0
}

// Retryable reports an error that a fresh try of the whole transaction may
// not meet again: a deadlock (on Galera also the loser of a certification
// conflict, reported as a deadlock at COMMIT), a lock wait timeout, and a
// node that is not yet (or no longer) ready for clients (1047, which a
// node rejoining the cluster answers).
func Retryable(err error) bool {
	switch errNumber(err) {
	case errDeadlock, errLockWait, errWsrepNotReady:
		return true
	}
	return errors.Is(err, ErrRetry)
}

// ErrRetry asks Retry for another try: the transaction found that a
// concurrent writer changed what it read (a generation compare-and-swap
// that matched no row), as oslo.db's RetryRequest does.
var ErrRetry = errors.New("changed concurrently; retry the transaction")

// backoff is the wait before retry number k (1-based).
func backoff(k int) time.Duration {
	if k <= 1 {
		return retryInterval
	}
	d := time.Duration(rand.Int64N(int64(retryInterval) << k))
	return min(d, maxRetryInterval)
}

// Retry runs try until it succeeds, fails with an error that is not
// Retryable, or RetryTries tries were made. try must run one whole
// transaction (rolled back when it fails) and must not keep what an earlier
// try changed outside the database.
func Retry(ctx context.Context, try func() error) error {
	var err error
	for k := 1; ; k++ {
		if err = try(); err == nil || !Retryable(err) || k >= RetryTries {
			return err
		}
		t := time.NewTimer(backoff(k))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}
