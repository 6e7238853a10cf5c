package placementdb

import (
	"github.com/rpctl/rpctl/internal/standards"
)

// CustomResourceClassMinID is where Placement starts numbering custom
// resource classes (MIN_CUSTOM_RESOURCE_CLASS_ID), keeping them clear of the
// standard classes whose id is their index.
const CustomResourceClassMinID = standards.FirstCustomResourceClassID

// StandardResourceClasses returns os-resource-classes' list; a class's
// Placement id is its index.
func StandardResourceClasses() []string { return standards.ResourceClasses() }
