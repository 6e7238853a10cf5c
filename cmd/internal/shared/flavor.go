package shared

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/flavors"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
)

// FlavorOptions name a flavor (and image) whose Placement request a command
// works with, as Nova's scheduler would build it.
type FlavorOptions struct {
	Flavor         string
	Image          string
	ImageProps     []string
	BootFromVolume bool
	// ImageMetadataPrefilter and ImageTypeSupport mirror the [scheduler]
	// options of the same names.
	ImageMetadataPrefilter bool
	ImageTypeSupport       bool
	// Release is --release: whose Nova builds the request.
	Release string
}

func AddImageFlags(fl *pflag.FlagSet, o *FlavorOptions) {
	fl.StringVar(&o.Image, "image", "", "an image as `openstack image show -f json` prints it (its properties and disk_format count)")
	fl.StringArrayVar(&o.ImageProps, "image-property", nil, "an image property KEY=VALUE, e.g. hw_cpu_policy=dedicated or trait:HW_CPU_X86_AVX2=required (repeatable)")
	fl.BoolVar(&o.BootFromVolume, "boot-from-volume", false, "the server boots from a volume: root_gb is not asked of DISK_GB")
	fl.BoolVar(&o.ImageMetadataPrefilter, "image-metadata-prefilter", false, "as [scheduler]image_metadata_prefilter: image properties become required root traits")
	fl.BoolVar(&o.ImageTypeSupport, "image-type-support", false, "as [scheduler]query_placement_for_image_type_support: require COMPUTE_IMAGE_TYPE_<disk_format>")
	AddReleaseFlag(fl, &o.Release, "whose Nova builds a flavor's Placement request (its vTPM, maxphysaddr, stateless firmware, packed virtqueue and VIF model rules, its standard traits)")
}

// LoadFlavorArg reads a flavor: a file path (JSON or YAML) when one exists,
// else a name or flavorid in the API database.
func LoadFlavorArg(ctx context.Context, f *cmdutil.Factory, arg string) (*nova.Flavor, *flavors.Image, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		fl, img, err := flavors.ParseFile(arg)
		if err != nil {
			return nil, nil, cmdutil.UsageError("--flavor %v", err)
		}
		return fl, img, nil
	}
	dbs, err := f.Databases(ctx, storage.NeedAPI, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("--flavor %q is not a file, and looking it up by name needs the API database: %w", arg, err)
	}
	defer dbs.Close()
	list, err := apidb.ListFlavors(ctx, dbs.API, arg)
	if err != nil {
		return nil, nil, err
	}
	if len(list) == 0 {
		return nil, nil, cmdutil.UsageError("--flavor %q: no such file, and no flavor of that name or id in the %s", arg, dbs.API.Label())
	}
	return &list[0], nil, nil
}

// LoadImage combines --image and --image-property with the flavor file's image.
func (o *FlavorOptions) LoadImage(fromFile *flavors.Image) (*flavors.Image, error) {
	img := fromFile
	if o.Image != "" {
		i, err := flavors.ParseImageFile(o.Image)
		if err != nil {
			return nil, cmdutil.UsageError("--image %v", err)
		}
		img = i
	}
	for _, kv := range o.ImageProps {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, cmdutil.UsageError("--image-property %q: want KEY=VALUE", kv)
		}
		if img == nil {
			img = &flavors.Image{}
		}
		img.SetProperty(k, v)
	}
	return img, nil
}

// Options are the flavors.Options the flags give; a --release rpctl does
// not know is invalid input (exit 2).
func (o *FlavorOptions) Options(limit int) (flavors.Options, error) {
	rel, err := ParseRelease(o.Release)
	if err != nil {
		return flavors.Options{}, cmdutil.UsageError("%v", err)
	}
	return flavors.Options{Limit: limit, BootFromVolume: o.BootFromVolume,
		ImageMetadataPrefilter: o.ImageMetadataPrefilter, ImageTypeSupport: o.ImageTypeSupport, Release: rel}, nil
}

// BuildFlavorRequest turns one flavor into Nova's request; a flavor Nova
// refuses is invalid input (exit 2) with Nova's message.
func BuildFlavorRequest(f *cmdutil.Factory, fl *nova.Flavor, img *flavors.Image, opt flavors.Options) (*flavors.Request, error) {
	r, err := flavors.Build(fl, img, opt)
	var ne *flavors.NovaError
	if errors.As(err, &ne) {
		return nil, cmdutil.UsageError("flavor %s: Nova refuses it (%s): %s", fl.Name, ne.Exception, ne.Message)
	}
	if err != nil {
		return nil, err
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(f.IO.ErrOut, "flavor %s: Nova ignores an extra spec: %s\n", fl.Name, w)
	}
	return r, nil
}
