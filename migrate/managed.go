package migrate

// ManagesClass reports whether `migrate inventory` owns the resource class
// on the providers it writes (and may remove it), so other writers such as
// provider config files must leave it alone.
func ManagesClass(rc string) bool { return managedClasses[rc] }
