package usage_test

import (
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }
