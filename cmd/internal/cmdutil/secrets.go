package cmdutil

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/internal/logging"
)

// SecretAnnotation declares a flag whose value must never be printed:
// "value" (the whole value: a token, a password) or "url" (the password
// of the database URL or DSN it takes). Run registers these values before
// anything is parsed or logged, so that the log, the errors and standard
// error show *** in their place, whatever form the command line used.
const SecretAnnotation = "rpctl/secret"

func MarkSecretFlags(fs *pflag.FlagSet, kind string, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, SecretAnnotation, []string{kind}); err != nil {
			panic(err) // a programming error: the flag is not defined
		}
	}
}

// secretFlags maps every long flag name in the tree that is declared
// secret to its kind.
func secretFlags(root *cobra.Command) map[string]string {
	kinds := map[string]string{}
	visit := func(fl *pflag.Flag) {
		if k := fl.Annotations[SecretAnnotation]; len(k) == 1 {
			kinds[fl.Name] = k[0]
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.PersistentFlags().VisitAll(visit)
		c.Flags().VisitAll(visit)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return kinds
}

// RegisterSecrets registers the secret values the command line and the
// environment hold, and returns the command line with them masked by
// their place (--os-token T, --os-token=T, a URL's password): the form the
// log records. Whatever the flag parser later makes of the line, the
// values are known.
func RegisterSecrets(root *cobra.Command, args []string) []string {
	logging.AddEnvSecrets()
	kinds := secretFlags(root)
	masked := append([]string(nil), args...)
	mask := func(kind, v string) string {
		if kind == "url" {
			logging.AddURLSecret(v)
			return logging.Redact(v)
		}
		logging.AddSecret(v)
		return "***"
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, v, hasValue := strings.Cut(a[2:], "=")
		kind, ok := kinds[name]
		switch {
		case !ok:
		case hasValue:
			masked[i] = "--" + name + "=" + mask(kind, v)
		case i+1 < len(args):
			masked[i+1] = mask(kind, args[i+1])
			i++
		}
	}
	return masked
}
