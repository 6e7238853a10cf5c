package migrate

import (
	"context"
	"time"
)

// placement-manage db online_data_migrations' migrations (Placement 8.0.0,
// placement/cmd/manage.py online_migrations), named as it names them.
const (
	SetRootProviderIDsName        = "set_root_provider_ids"
	CreateIncompleteConsumersName = "create_incomplete_consumers"
)

// PlacementOnline is the Placement database's side of placement-manage's
// online migrations; storage/placementdb implements it.
type PlacementOnline interface {
	// SetRootProviderIDs sets root_provider_id = id (and updated_at) on up
	// to limit providers whose root_provider_id is NULL and returns how
	// many it changed.
	SetRootProviderIDs(ctx context.Context, limit int, now time.Time) (int, error)
	// CreateIncompleteConsumers creates, in one transaction, the projects
	// and users rows of these external ids unless they exist, and a
	// consumers row (of that project and user) for up to limit distinct
	// allocations.consumer_id without one; it returns how many consumers
	// it created.
	CreateIncompleteConsumers(ctx context.Context, project, user string, limit int, now time.Time) (int, error)
}

// SetRootProviderIDs is Placement 8.0.0's set_root_provider_ids
// (placement/objects/resource_provider.py): one UPDATE of up to count
// providers without a root_provider_id, each its own root; found = done =
// the rows changed.
type SetRootProviderIDs struct {
	Placement PlacementOnline
	Now       func() time.Time
}

// Name implements Migration.
func (*SetRootProviderIDs) Name() string { return SetRootProviderIDsName }

// Run implements Migration.
func (m *SetRootProviderIDs) Run(ctx context.Context, count int) (found, done int, err error) {
	n, err := m.Placement.SetRootProviderIDs(ctx, count, timeNow(m.Now))
	return n, n, err
}

// CreateIncompleteConsumers is Placement 8.0.0's create_incomplete_consumers
// (placement/objects/consumer.py): the allocations whose consumer has no
// consumers row get one, of the "incomplete consumer" project and user
// ([placement] incomplete_consumer_project_id / _user_id, whose projects
// and users rows it creates first); found = done = the consumers created.
type CreateIncompleteConsumers struct {
	Placement     PlacementOnline
	Project, User string
	Now           func() time.Time
}

// Name implements Migration.
func (*CreateIncompleteConsumers) Name() string { return CreateIncompleteConsumersName }

// Run implements Migration.
func (m *CreateIncompleteConsumers) Run(ctx context.Context, count int) (found, done int, err error) {
	n, err := m.Placement.CreateIncompleteConsumers(ctx, m.Project, m.User, count, timeNow(m.Now))
	return n, n, err
}
