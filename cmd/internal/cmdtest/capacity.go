package cmdtest

type CapacityOut struct {
	Flavors []string         `json:"flavors"`
	Total   map[string]int64 `json:"total"`
	Hosts   []struct {
		Host         string           `json:"host"`
		ProviderUUID string           `json:"provider_uuid"`
		Free         map[string]int64 `json:"free"`
	} `json:"hosts"`
	Aggregates []struct {
		Aggregate string           `json:"aggregate"`
		Free      map[string]int64 `json:"free"`
	} `json:"aggregates"`
}
