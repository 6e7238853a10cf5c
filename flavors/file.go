package flavors

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/readlimit"
)

// Image is what the scheduler reads of an image: its properties (as
// strings), disk_format and the required traits (`trait:NAME=required`
// properties and `traits_required`, as ImageMetaProps.from_dict collects
// them).
type Image struct {
	ID             string
	Name           string
	DiskFormat     string
	Properties     map[string]string
	TraitsRequired []string
}

// SetProperty adds one image property, collecting trait:NAME=required.
func (img *Image) SetProperty(k, v string) {
	if img.Properties == nil {
		img.Properties = map[string]string{}
	}
	img.Properties[k] = v
	if name, ok := strings.CutPrefix(k, "trait:"); ok && v == "required" {
		img.TraitsRequired = append(img.TraitsRequired, name)
	}
}

// MaxFileBytes bounds a flavor or image file: `openstack flavor show -f
// json` prints a few KB, Nova caps an extra spec's key and value at 255
// characters each.
const MaxFileBytes = 1 << 20

// ParseFile reads a flavor file: the JSON `openstack flavor show -f json`
// prints (extra specs in "properties"), or {"name", "vcpus", "ram",
// "disk", "ephemeral", "swap", "extra_specs"}, as JSON or YAML. An optional
// "image" object ({"properties": {...}, "disk_format": ...}, as
// `openstack image show -f json` prints it) or "image_properties" map gives
// the image.
func ParseFile(path string) (*nova.Flavor, *Image, error) {
	data, err := readlimit.File(path, MaxFileBytes, "a flavor file")
	if err != nil {
		return nil, nil, err
	}
	f, img, err := Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, img, nil
}

// Parse is ParseFile on bytes.
func Parse(data []byte) (*nova.Flavor, *Image, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("not a JSON or YAML flavor: %v", firstLine(err.Error()))
	}
	if doc == nil {
		return nil, nil, fmt.Errorf("empty flavor file")
	}
	f := &nova.Flavor{ExtraSpecs: map[string]string{}, IsPublic: true}
	var err error
	num := func(field string, keys ...string) int64 {
		for _, k := range keys {
			v, ok := doc[k]
			if !ok || err != nil {
				continue
			}
			n, e := toInt(v)
			if e != nil {
				err = fmt.Errorf("field %q: %v", k, e)
			}
			return n
		}
		return 0
	}
	if v, ok := doc["name"]; ok {
		f.Name = scalarString(v)
	}
	if v, ok := doc["id"]; ok {
		f.FlavorID = scalarString(v)
	}
	f.VCPUs = num("vcpus", "vcpus")
	f.MemoryMB = num("ram", "ram", "memory_mb")
	f.RootGB = num("disk", "disk", "root_gb")
	f.EphemeralGB = num("ephemeral", "ephemeral", "OS-FLV-EXT-DATA:ephemeral", "ephemeral_gb")
	f.Swap = num("swap", "swap")
	if err != nil {
		return nil, nil, err
	}
	if _, ok := doc["vcpus"]; !ok {
		return nil, nil, fmt.Errorf("field \"vcpus\" is missing")
	}
	if _, ok := doc["ram"]; !ok {
		if _, ok := doc["memory_mb"]; !ok {
			return nil, nil, fmt.Errorf("field \"ram\" is missing")
		}
	}
	if v, ok := doc["os-flavor-access:is_public"]; ok {
		f.IsPublic, _ = v.(bool)
	}
	for _, key := range []string{"extra_specs", "properties"} {
		v, ok := doc[key]
		if !ok || v == nil {
			continue
		}
		specs, err := stringMap(v)
		if err != nil {
			return nil, nil, fmt.Errorf("field %q: %v", key, err)
		}
		for k, s := range specs {
			f.ExtraSpecs[k] = s
		}
	}
	var img *Image
	if v, ok := doc["image"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("field \"image\": want an object")
		}
		if img, err = ParseImage(m); err != nil {
			return nil, nil, fmt.Errorf("field \"image\": %v", err)
		}
	}
	if v, ok := doc["image_properties"]; ok && v != nil {
		props, err := stringMap(v)
		if err != nil {
			return nil, nil, fmt.Errorf("field \"image_properties\": %v", err)
		}
		if img == nil {
			img = &Image{}
		}
		for _, k := range sortedKeys(props) {
			img.SetProperty(k, props[k])
		}
	}
	return f, img, nil
}

// ParseImageFile reads `openstack image show -f json` output (or YAML).
func ParseImageFile(path string) (*Image, error) {
	data, err := readlimit.File(path, MaxFileBytes, "an image file")
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not a JSON or YAML image: %v", path, firstLine(err.Error()))
	}
	img, err := ParseImage(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

// ParseImage reads an image object: "properties" (a map), "disk_format",
// "name", "id"; image properties Glance shows at the top level (hw_*,
// os_*, trait:*, traits_required) are taken too.
func ParseImage(doc map[string]any) (*Image, error) {
	img := &Image{Properties: map[string]string{}}
	props := map[string]string{}
	for k, v := range doc {
		switch {
		case k == "name":
			img.Name = scalarString(v)
		case k == "id":
			img.ID = scalarString(v)
		case k == "disk_format":
			img.DiskFormat = scalarString(v)
		case k == "properties":
			if v == nil {
				continue
			}
			m, err := stringMap(v)
			if err != nil {
				return nil, fmt.Errorf("field \"properties\": %v", err)
			}
			for pk, pv := range m {
				props[pk] = pv
			}
		case k == "traits_required":
			l, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("field \"traits_required\": want a list")
			}
			for _, t := range l {
				img.TraitsRequired = append(img.TraitsRequired, scalarString(t))
			}
		case strings.HasPrefix(k, "hw_") || strings.HasPrefix(k, "os_") || strings.HasPrefix(k, "trait:"):
			props[k] = scalarString(v)
		}
	}
	for _, k := range sortedKeys(props) {
		img.SetProperty(k, props[k])
	}
	return img, nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// stringMap accepts a map of scalars, or the "k='v', k2='v2'" string older
// openstackclients print for properties.
func stringMap(v any) (map[string]string, error) {
	out := map[string]string{}
	switch m := v.(type) {
	case map[string]any:
		for k, x := range m {
			if _, isMap := x.(map[string]any); isMap {
				return nil, fmt.Errorf("key %q: want a string, not an object", k)
			}
			if _, isList := x.([]any); isList {
				return nil, fmt.Errorf("key %q: want a string, not a list", k)
			}
			out[k] = scalarString(x)
		}
	case string:
		for _, part := range splitProps(m) {
			k, val, ok := strings.Cut(part, "=")
			if !ok {
				return nil, fmt.Errorf("%q is not key='value'", part)
			}
			out[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(val), "'")
		}
	default:
		return nil, fmt.Errorf("want a map of strings")
	}
	return out, nil
}

// splitProps splits "a='1', b='x,y'" at commas outside quotes.
func splitProps(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted = !quoted
			cur.WriteRune(r)
		case r == ',' && !quoted:
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, cur.String())
	}
	return out
}

func scalarString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case float64:
		if x != math.Trunc(x) {
			return 0, fmt.Errorf("%v is not a whole number", x)
		}
		return int64(x), nil
	case string:
		if x == "" {
			return 0, nil // openstackclient prints swap 0 as ""
		}
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", x)
		}
		return n, nil
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("%v is not a number", v)
}
