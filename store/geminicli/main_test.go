package geminicli_test

import (
	"os"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
