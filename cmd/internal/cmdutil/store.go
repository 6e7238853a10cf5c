package cmdutil

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// InventoryStore opens the Store the provider/inventory/trait/... commands
// work on: the Placement API when selected, else the Placement database.
// The returned func releases it.
func (f *Factory) InventoryStore(ctx context.Context) (inventory.Store, func(), error) {
	if st, done, err := apiInventoryStore(ctx, f); err != nil || st != nil {
		return st, done, err
	}
	dbs, err := f.Databases(ctx, storage.NeedPlacement, 0)
	if err != nil {
		return nil, nil, &ExitError{Code: ExitStoreUnexpected, Err: err}
	}
	return placementdb.New(dbs.Placement), func() { dbs.Close() }, nil
}

// Exit codes of the provider, inventory, usage, resource-class and trait
// commands.
const (
	// ExitStoreIncomplete: the edit was not (fully) applied although nothing was
	// wrong with it — a generation conflict persisted through every retry,
	// the confirmation was declined, or with --aggregate some providers
	// conflicted or failed.
	ExitStoreIncomplete = 1
	// ExitStoreRefused: invalid input, or Placement refused the request (not
	// found, in use, already exists, bad request); nothing was written.
	ExitStoreRefused = 2
	// ExitStoreUnexpected: configuration, dead database or API, internal error.
	ExitStoreUnexpected = 255
)

// StoreExitCodes was the commands' exit-code paragraph; the table is now
// declared once (storeExitCodeRows) and rendered into every --help by
// FinishCommandTree, like every command's.
const StoreExitCodes = ""

// OSCExitCodes is the paragraph of every command spelled as an
// osc-placement command: the codes are rpctl's contract, not osc's.
const OSCExitCodes = `Exit codes are rpctl's, not osc's: osc-placement exits 1 on every error; rpctl exits 2
when the input is invalid or Placement refuses (not found, bad request, in use, already
exists) and 1 only when a write was not applied although valid (a generation conflict).`

// storeExitCodeRows are the exit codes of every provider, inventory, usage,
// resource-class and trait command.
var storeExitCodeRows = []ExitCodeRow{
	{ExitOK, "done"},
	{ExitStoreIncomplete, "not applied although valid (a generation conflict persisted through every retry, or the confirmation was declined; with --aggregate, some providers conflicted or failed)"},
	{ExitStoreRefused, "invalid input or refused by Placement (not found, in use, already exists, bad request, forbidden by its policy (401/403); nothing written)"},
}

// SetStoreExitCodes declares storeExitCodeRows on every runnable command
// under cmds.
func SetStoreExitCodes(cmds ...*cobra.Command) {
	for _, c := range cmds {
		switch {
		case !c.Runnable():
		case readOnlyStoreCommand(c):
			SetExitCodes(c, storeReadExitCodeRows...)
		default:
			SetExitCodes(c, storeExitCodeRows...)
		}
		SetStoreExitCodes(c.Commands()...)
	}
}

// storeReadExitCodeRows are the codes of the commands that only read: no
// write can conflict or be declined.
var storeReadExitCodeRows = []ExitCodeRow{
	{ExitOK, "done"},
	{ExitStoreRefused, "invalid input or refused by Placement (not found, bad request, forbidden by its policy (401/403))"},
}

// readOnlyStoreCommand: list, show and tree only read.
func readOnlyStoreCommand(c *cobra.Command) bool {
	switch c.Name() {
	case "list", "show", "tree", "project":
		return true
	}
	return false
}

// StoreError maps a Store or domain error to the exit code its kind means.
func StoreError(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	switch {
	case errors.Is(err, inventory.ErrGeneration), errors.Is(err, inventory.ErrDeclined):
		return &ExitError{Code: ExitStoreIncomplete, Err: err}
	case errors.Is(err, inventory.ErrNotFound), errors.Is(err, inventory.ErrInUse),
		errors.Is(err, inventory.ErrConflict), errors.Is(err, inventory.ErrBadRequest), errors.Is(err, inventory.ErrForbidden):
		return &ExitError{Code: ExitStoreRefused, Err: err}
	}
	return &ExitError{Code: ExitStoreUnexpected, Err: err}
}
