package cmd

// commandExample is the Examples section of the commands an operator runs
// by hand (issue 39: three had one), by command path; it joins a command's
// help when the help is shown (cmdutil.SetExamples), so no run pays for
// it. A switch, not a map: nothing is built at init.
func commandExample(path string) string {
	const db = "--placement-db mysql+pymysql://placement:PW@db/placement"
	const api = "--os-cloud mycloud"
	switch path {
	case "rpctl init":
		return `  rpctl --db cloud.db init
  rpctl --cell-db mysql+pymysql://nova:PW@db/nova --api-db mysql+pymysql://nova:PW@db/nova_api ` + db + ` init`
	case "rpctl sample-cloud":
		return `  rpctl --db cloud.db sample-cloud --nodes 200 --cells 2 --seed 1`
	case "rpctl compute-node list":
		return `  rpctl --config-file /etc/nova/nova.conf compute-node list --long
  rpctl --db cloud.db compute-node list --cell cell1 -f csv`
	case "rpctl status":
		return `  rpctl --config-file /etc/nova/nova.conf status
  rpctl --config-file /etc/nova/nova.conf status --check nova-status --json
  rpctl --db cloud.db status --check compute-node-uuids --release 2025.1`
	case "rpctl upgrade check":
		return `  rpctl --config-file /etc/nova/nova.conf upgrade check --json`
	case "rpctl migrate all":
		return `  rpctl --config-file /etc/nova/nova.conf migrate all --dry-run
  rpctl --config-file /etc/nova/nova.conf migrate all --release 2025.1 --max-count 500`
	case "rpctl migrate inventory":
		return `  rpctl --db cloud.db migrate inventory --dry-run
  rpctl --config-file /etc/nova/nova.conf migrate inventory --layout nested --compute-config-dir /srv/nova-confs`
	case "rpctl migrate ratios":
		return `  rpctl --config-file /etc/nova/nova.conf migrate ratios --dry-run
  rpctl --db cloud.db migrate ratios --release 2025.1 --cell cell1`
	case "rpctl migrate allocations":
		return `  rpctl --config-file /etc/nova/nova.conf migrate allocations --dry-run
  rpctl --config-file /etc/nova/nova.conf migrate allocations --batch-size 100 --max-count 1000`
	case "rpctl migrate aggregates":
		return `  rpctl --config-file /etc/nova/nova.conf migrate aggregates --dry-run
  rpctl --config-file /etc/nova/nova.conf migrate aggregates --prune`
	case "rpctl migrate placement":
		return `  rpctl --config-file /etc/placement/placement.conf migrate placement
  rpctl --db cloud.db migrate placement --max-count 500`
	case "rpctl migrate uuids", "rpctl migrate availability-zones", "rpctl migrate dev-uuids", "rpctl migrate queued-for-delete", "rpctl migrate user-id",
		"rpctl migrate quotas", "rpctl migrate vif-list":
		return "  rpctl --config-file /etc/nova/nova.conf " + path[len("rpctl "):] + " --dry-run\n  rpctl --db cloud.db " + path[len("rpctl "):] + " --cell cell1 --max-count 500"
	case "rpctl migrate compute-ids":
		return `  rpctl --config-file /etc/nova/nova.conf migrate compute-ids --release 2025.1
  rpctl --db cloud.db migrate compute-ids --release 2025.1 --cell cell1 --max-count 500`
	case "rpctl provider list":
		return `  rpctl ` + db + ` provider list --resources VCPU:4,MEMORY_MB:8192
  rpctl ` + api + ` provider list --required HW_CPU_X86_AVX2 --member-of in:AGG1,AGG2 -f value -c name`
	case "rpctl provider show":
		return `  rpctl ` + db + ` provider show cmp1-00001.example.org
  rpctl ` + api + ` provider show RP_UUID --allocations -f json`
	case "rpctl provider tree":
		return `  rpctl ` + db + ` provider tree cmp1-00001.example.org`
	case "rpctl provider create":
		return `  rpctl ` + api + ` provider create cmp1-00001_numa0 --parent-provider cmp1-00001.example.org
  rpctl ` + db + ` provider create shared-disk --uuid 8d2b5f5e-4c1a-4d5e-9a3b-2f6c7d8e9f01`
	case "rpctl provider set":
		return `  rpctl ` + api + ` provider set shared-disk --name ceph-pool-1
  rpctl ` + db + ` provider set cmp1-00001_numa0 --no-parent`
	case "rpctl provider delete":
		return `  rpctl ` + api + ` provider delete cmp1-00099.example.org`
	case "rpctl provider trait list":
		return `  rpctl ` + db + ` provider trait list cmp1-00001.example.org -f value`
	case "rpctl provider trait set":
		return `  rpctl ` + api + ` provider trait set cmp1-00001.example.org --trait CUSTOM_GOLD --trait HW_CPU_X86_AVX2`
	case "rpctl provider trait add":
		return `  rpctl ` + db + ` provider trait add cmp1-00001.example.org CUSTOM_GOLD`
	case "rpctl provider trait remove":
		return `  rpctl ` + db + ` provider trait remove cmp1-00001.example.org CUSTOM_GOLD`
	case "rpctl provider trait delete":
		return `  rpctl ` + api + ` provider trait delete cmp1-00001.example.org`
	case "rpctl provider aggregate list":
		return `  rpctl ` + db + ` provider aggregate list cmp1-00001.example.org`
	case "rpctl provider aggregate set":
		return `  rpctl ` + api + ` provider aggregate set cmp1-00001.example.org --aggregate AGG_UUID --generation 7`
	case "rpctl provider aggregate add":
		return `  rpctl ` + db + ` provider aggregate add shared-disk AGG_UUID`
	case "rpctl provider aggregate remove":
		return `  rpctl ` + db + ` provider aggregate remove shared-disk AGG_UUID`
	case "rpctl inventory list":
		return `  rpctl ` + db + ` inventory list cmp1-00001.example.org
  rpctl ` + api + ` inventory list cmp1-00001.example.org -f json -c resource_class -c free`
	case "rpctl inventory show":
		return `  rpctl ` + db + ` inventory show cmp1-00001.example.org VCPU`
	case "rpctl inventory set":
		return `  rpctl ` + db + ` inventory set cmp1-00001.example.org VCPU:allocation_ratio=4.0 MEMORY_MB:reserved=2048 --amend
  rpctl ` + api + ` inventory set cmp1-00001.example.org --resource VCPU=64 --resource MEMORY_MB=262144 --dry-run
  rpctl ` + api + ` inventory set AGG_UUID --aggregate --amend VCPU:allocation_ratio=2.0 --changes`
	case "rpctl inventory class set":
		return `  rpctl ` + api + ` inventory class set cmp1-00001.example.org VCPU --total 64 --allocation_ratio 4.0`
	case "rpctl inventory delete":
		return `  rpctl ` + db + ` inventory delete cmp1-00001.example.org --resource-class CUSTOM_GPU
  rpctl ` + api + ` inventory delete cmp1-00099.example.org --changes`
	case "rpctl usage show":
		return `  rpctl ` + db + ` usage show cmp1-00001.example.org`
	case "rpctl usage project":
		return `  rpctl ` + api + ` usage project PROJECT_ID --user-id USER_ID
  rpctl ` + db + ` usage project PROJECT_ID --by-consumer-type`
	case "rpctl resource-class list":
		return `  rpctl ` + db + ` resource-class list -f value`
	case "rpctl resource-class show":
		return `  rpctl ` + api + ` resource-class show CUSTOM_GPU`
	case "rpctl resource-class create", "rpctl resource-class set":
		return "  rpctl " + api + " " + path[len("rpctl "):] + " CUSTOM_GPU"
	case "rpctl resource-class delete":
		return `  rpctl ` + api + ` resource-class delete CUSTOM_GPU`
	case "rpctl trait list":
		return `  rpctl ` + db + ` trait list --name startswith:CUSTOM_ --associated`
	case "rpctl trait show":
		return `  rpctl ` + api + ` trait show CUSTOM_GOLD`
	case "rpctl trait create":
		return `  rpctl ` + api + ` trait create CUSTOM_GOLD --changes`
	case "rpctl trait delete":
		return `  rpctl ` + api + ` trait delete CUSTOM_GOLD`
	case "rpctl allocation show":
		return `  rpctl ` + api + ` allocation show CONSUMER_UUID -f json`
	case "rpctl allocation set":
		return `  rpctl ` + api + ` allocation set CONSUMER_UUID --allocation rp=RP_UUID,VCPU=2,MEMORY_MB=4096 --project-id P --user-id U`
	case "rpctl allocation unset":
		return `  rpctl ` + api + ` allocation unset CONSUMER_UUID --provider RP_UUID
  rpctl ` + db + ` allocation unset CONSUMER_UUID --resource-class VGPU`
	case "rpctl allocation delete":
		return `  rpctl ` + api + ` allocation delete CONSUMER_UUID`
	case "rpctl claims list":
		return `  rpctl --config-file /etc/nova/nova.conf claims list --host cmp1-00001
  rpctl --config-file /etc/nova/nova.conf claims list --orphans --expiry 600s -f csv`
	case "rpctl claims audit":
		return `  rpctl --config-file /etc/nova/nova.conf claims audit
  rpctl --config-file /etc/nova/nova.conf claims audit --delete --resource_provider RP_UUID`
	case "rpctl claims heal":
		return `  rpctl --config-file /etc/nova/nova.conf claims heal --dry-run
  rpctl --config-file /etc/nova/nova.conf claims heal --instance INSTANCE_UUID --skip-port-allocations`
	case "rpctl claims create":
		return `  rpctl --config-file /etc/nova/nova.conf claims create --consumer UUID --project P --user U --flavor m1.small --host cmp1-00001`
	case "rpctl claims release":
		return `  rpctl --config-file /etc/nova/nova.conf claims release CONSUMER_UUID`
	case "rpctl claims snapshot":
		return `  rpctl --config-file /etc/nova/nova.conf claims snapshot --out before.db`
	case "rpctl claims diff":
		return `  rpctl --config-file /etc/nova/nova.conf claims diff before.db`
	}
	return ""
}
