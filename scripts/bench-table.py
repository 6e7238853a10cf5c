#!/usr/bin/python3
"""The benchmark table of one `make bench` run.

    scripts/bench-table.py RUN.txt [RUN2.txt...]                 print the table (markdown)
    scripts/bench-table.py RUN.txt [RUN2.txt...] --update F...   replace it in each F between
                                                    <!-- bench-table --> and <!-- /bench-table -->

RUN.txt is what scripts/bench.sh wrote (its first line has the date and the
load average, its last the end and the load average then). Every figure in
the table is read from that one run; a benchmark the run did not report
shows as "not run", never as an older figure. A later RUN2 (e.g. `BENCH=X
make bench` after a change) replaces the benchmarks it reports, and the
table's first line says which rows came from which run.
"""
import re
import sys

BEGIN, END = "<!-- bench-table -->", "<!-- /bench-table -->"


def parse(text):
    """Benchmark name (without the -GOMAXPROCS suffix) -> {unit: value},
    plus the start-up lines and the tables the benchmarks print."""
    metrics, startup, lines = {}, {}, text.splitlines()
    for line in lines:
        if line.startswith("Benchmark"):
            f = line.split()
            name = re.sub(r"-\d+$", "", f[0])
            m = {}
            for i in range(2, len(f) - 1, 2):
                try:
                    m[f[i + 1]] = float(f[i])
                except ValueError:
                    pass
            metrics[name] = m
        s = re.match(r"^(/bin/true|bin/rpctl --version|bin/rpctl --db EMPTY compute-node list)\s+([\d.]+)ms", line)
        if s:
            startup[s.group(1)] = float(s.group(2))
    return metrics, startup, lines


def find(lines, pattern):
    for line in lines:
        m = re.search(pattern, line)
        if m:
            return m
    return None


def when(lines):
    head = (lines[0] if lines else "").replace("make bench, ", "")
    tail = next((l for l in reversed(lines) if l.startswith("finished")), "finished: (not in the output: the run did not end)")
    return "%s; %s" % (head, tail)


def table(texts):
    metrics, startup, lines = parse(texts[0])
    runs = ["From one `make bench` run: %s." % when(lines)]
    for text in texts[1:]:
        m2, s2, l2 = parse(text)
        metrics.update(m2)
        startup.update(s2)
        # find() takes the first match: the later run's printed tables first.
        lines = l2 + lines
        names = (["start-up"] if s2 else []) + ["`%s`" % n for n in sorted(m2)]
        runs.append("Replaced by a later run (%s): %s." % (when(l2), ", ".join(names) or "nothing"))
    rows = []

    def row(what, figure, target):
        rows.append("| %s | %s | %s |" % (what, figure, target))

    def g(name, unit):
        return metrics.get(name, {}).get(unit)

    floor, ver, lst = startup.get("/bin/true"), startup.get("bin/rpctl --version"), startup.get("bin/rpctl --db EMPTY compute-node list")
    if floor and ver:
        row("start-up: `rpctl --version`, whole process (hyperfine median)", "**%.2f ms** (%.1fx `/bin/true`, %.2f ms)" % (ver, ver / floor, floor), "<= 5 ms")
    else:
        row("start-up: `rpctl --version`", "not run (hyperfine missing?)", "<= 5 ms")
    if floor and lst:
        row("start-up: `rpctl --db EMPTY compute-node list`", "%.2f ms (%.1fx `/bin/true`)" % (lst, lst / floor), "-")

    for label, key in (("placement-perfload (1,000 roots)", "placement-perfload"), ("placement-nested-perfload (1,000 x 7)", "placement-nested-perfload")):
        m = find(lines, re.escape(label) + r"\s+\d+\s+\d+\s+(\S+)\s+(\S+)\s+(\d+)x\s+(\S+)\s+([\d.]+)x\s+(\d+) MiB(?:\s+(\S+))?(?:\s+(\S+)\s+(\S+))?")
        if m:
            # Runs since 2026-11-28 04:00 print means and, after them, the
            # medians; earlier runs printed medians only.
            avg = " (means; medians %s and %s)" % (m.group(8), m.group(9)) if m.group(8) else ""
            row("`candidates` vs the real placement-api, %s" % label,
                # The bench's RSS column is left out: the child is spawned
                # sharing the test binary's memory (CLONE_VM), whose pages
                # its peak RSS then counts.
                "placement-api %s; rpctl process end to end %s: **%sx**%s%s; core %s: %sx" % (m.group(1), m.group(4), m.group(5), avg,
                    " (of which the read and the model %s)" % m.group(7) if m.group(7) else "", m.group(2), m.group(3)),
                "e2e >= 10x, core >= 100x")
        else:
            row("`candidates` vs the real placement-api, %s" % label, "not run", "e2e >= 10x, core >= 100x")

    n = "BenchmarkCandidatesLatency"
    for label, key in (("placement-perfload", "placement-perfload"), ("placement-nested-perfload", "placement-nested-perfload")):
        if g(n, key + "-0ms-rpctl-ms") is None:
            row("`candidates` at 0 and 0.5 ms round trip to MariaDB, %s" % label, "not run", "<= 8 round trips; e2e >= 10x")
            continue
        parts = []
        for d in ("0ms", "0.5ms"):
            pl, rp = g(n, "%s-%s-placement-ms" % (key, d)), g(n, "%s-%s-rpctl-ms" % (key, d))
            parts.append("%s: placement-api %.1f ms (%.1f round trips), rpctl %.1f ms (%.1f): **%.1fx**" % (
                d.replace("ms", " ms"), pl, g(n, "%s-%s-placement-rt" % (key, d)), rp, g(n, "%s-%s-rpctl-rt" % (key, d)), pl / rp))
        row("`candidates` at 0 and 0.5 ms round trip to MariaDB (a latency proxy; the placement-api's database behind it too), %s" % label,
            "; ".join(parts), "<= 8 round trips; e2e >= 10x")

    n = "BenchmarkMigrateAllLatency"
    if n in metrics:
        row("`migrate all`, %s nodes in 4 cells, at 0 and 0.5 ms round trip to MariaDB (a latency proxy; a `SELECT 1` through it measured %.3f and %.3f ms)"
            % (format(int(g(n, "big-nodes")), ","), g(n, "proxy-rt-0ms-ms"), g(n, "proxy-rt-0.5ms-ms")),
            "%.1f s vs %.1f s: **%.2fx**; %.3f round trips per node" % (g(n, "rpctl-big-0ms-s"), g(n, "rpctl-big-0.5ms-s"), g(n, "rpctl-big-slower-x"), g(n, "rpctl-big-rt/node")),
            "0.5 ms within 2x of 0 ms")
        row("the same work on %s nodes beside Nova's tools (online_data_migrations, sync_aggregates, heal_allocations; the placement-api's database behind the same proxy)"
            % format(int(g(n, "sample-nodes")), ","),
            "Nova %.1f s at 0 ms, %.1f s at 0.5 ms (%.1f round trips per node); rpctl `migrate all` %.1f s, %.1f s (%.2f per node)" % (
                g(n, "nova-sample-0ms-s"), g(n, "nova-sample-0.5ms-s"), g(n, "nova-sample-rt/node"), g(n, "rpctl-sample-0ms-s"), g(n, "rpctl-sample-0.5ms-s"), g(n, "rpctl-sample-rt/node")),
            "reported")
    else:
        row("`migrate all`, 100,000 nodes at 0 and 0.5 ms round trip", "not run", "0.5 ms within 2x of 0 ms")

    n = "BenchmarkInventory100k"
    if n in metrics:
        row("`migrate inventory`, 100,000 nodes into MariaDB (one transaction per node) vs a bulk insert of the same rows (one transaction)",
            ("%.2f s vs %.2f s: **%.2fx** (medians of %d)" % (g(n, "migrate_s"), g(n, "bulk_insert_s"), g(n, "ratio_to_bulk"), g(n, "runs"))) +
            ("; CPU during the migration: MariaDB %.1f s, the migration %.1f s; during the bulk insert: MariaDB %.1f s"
             % (g(n, "migrate_mariadb_cpu_s"), g(n, "migrate_rpctl_cpu_s"), g(n, "bulk_mariadb_cpu_s")) if g(n, "migrate_mariadb_cpu_s") else ""),
            "reported (issue 35 withdrew <= 1.3x: one transaction per node is MariaDB's work)")
    else:
        row("`migrate inventory`, 100,000 nodes", "not run", "reported (issue 35 withdrew <= 1.3x)")

    n = "BenchmarkInventorySetAggregateVsOSC"
    for label, x, sec in (("the one-thread test server", "osc-loop/rpctl-x", "rpctl-s"), ("uWSGI, 2 processes", "uwsgi-osc-loop/rpctl-x", "uwsgi-rpctl-s")):
        what = ("`inventory set AGG --aggregate --amend` lowering capacity on 1,000 providers through the real placement-api (%s) "
                "vs a loop of `openstack resource provider inventory set --amend` (20 calls, extrapolated)" % label)
        if g(n, x):
            extra = ""
            if sec == "uwsgi-rpctl-s" and g(n, "uwsgi-raise-p4-s"):
                extra = "; raising capacity: %.1f s at the default `--parallel` 2, %.1f s at 4" % (g(n, "uwsgi-raise-p2-s"), g(n, "uwsgi-raise-p4-s"))
            row(what, "rpctl %.1f s vs osc %.0f s: **%.1fx**%s" % (g(n, sec), g(n, x) * g(n, sec), g(n, x), extra), ">= 50x")
        else:
            row(what, "not run", ">= 50x")

    n = "BenchmarkClaimsHeal"
    if n in metrics:
        row("`claims heal`, 100,000 instances vs Nova 26 `heal_allocations` (2,000 sample, extrapolated)",
            "Nova %.0f s extrapolated; rpctl flat %.1f s: **%.0fx**; nested %.1f s: %.0fx; shared storage %.1f s: %.0fx"
            % (g(n, "nova-100k-extrapolated-s"), g(n, "rpctl-100k-s"), g(n, "speedup-100k-x"), g(n, "rpctl-100k-nested-s"), g(n, "speedup-100k-nested-x"), g(n, "rpctl-100k-shared-s"), g(n, "speedup-100k-shared-x")),
            ">= 100x flat; nested and shared reported")
    n = "BenchmarkMigrateAggregates"
    if n in metrics:
        row("`migrate aggregates`, 100,000 hosts in 500 aggregates vs Nova 26 `sync_aggregates` (2,000 sample, extrapolated)",
            "Nova %.0f s extrapolated vs rpctl %.1f s: **%.0fx**; 2,000 sample through the placement-api %.1f s" % (g(n, "nova-100k-extrapolated-s"), g(n, "rpctl-db-100k-s"), g(n, "speedup-100k-x"), g(n, "rpctl-api-2k-s")),
            "reported")
    n = "BenchmarkExporter10kHosts20Flavors/head"
    if n in metrics:
        row("`rpctl exporter`, one collection on 10,000 hosts x 20 flavors, scraped meanwhile",
            "collection **%.2f s** (exporter CPU %.2f s); scrape median %.1f ms, **p90 %.1f ms**; %.0f series" % (g(n, "collect-s"), g(n, "cpu-s/collect"), g(n, "scrape-ms-median"), g(n, "scrape-ms-p90"), g(n, "series")),
            "< 2 s; scrape < 50 ms")
    n = "BenchmarkAllChecks100k"
    if n in metrics:
        row("`status`, all checks on 100,000 nodes", "median **%.0f ms**, max %.0f ms" % (g(n, "median-ms"), g(n, "max-ms")), "< 3 s")
    for mode in ("independent", "pack"):
        n = "BenchmarkCapacity10kHosts20Flavors/" + mode
        if n in metrics:
            row("`capacity`, 10,000 hosts x 20 flavors, %s (model loaded)" % mode, "%.0f ms wall, %.0f ms CPU per run" % (g(n, "ns/op") / 1e6, g(n, "cpu-ms/op")), "< 2 s")
    n = "Benchmark100kLoad"
    if n in metrics:
        row("100,000 providers from MariaDB into the model", "load %.0f ms, heap %.0f MiB, `rpctl candidates` process %.0f MiB RSS" % (g(n, "load-s") * 1e3, g(n, "heap-MiB"), g(n, "rss-MiB")), "< 2 s, < 500 MB")
    n = "BenchmarkExplosionLimit1000"
    if n in metrics:
        row("explosion: 1 root, 8 single-unit children, 8 groups, limit=1000", "%.2f ms" % (g(n, "ns/op") / 1e6), "< 100 ms")
    a, b = "BenchmarkEmptyRatios100k/batches-of-50", "BenchmarkEmptyRatios100k/max-count-100000"
    if a in metrics and b in metrics:
        row("`migrate ratios`, 100,000 rows", "%.2f s in batches of 50, %.2f s in one batch" % (g(a, "ns/op") / 1e9, g(b, "ns/op") / 1e9), "-")
    n = "BenchmarkWrite100k"
    if n in metrics:
        row("`sample-cloud`, 100,000 nodes written to MariaDB", "%.1f s" % (g(n, "ns/op") / 1e9), "-")

    out = [" ".join(runs), "", "| what | this run | target |", "|---|---|---|"] + rows
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    runs = args[:args.index("--update")] if "--update" in args else args
    t = table([open(r).read() for r in runs])
    if "--update" not in args:
        sys.stdout.write(t)
        return
    for path in args[args.index("--update") + 1:]:
        doc = open(path).read()
        i, j = doc.find(BEGIN), doc.find(END)
        if i < 0 or j < i:
            sys.exit("%s: no %s ... %s section" % (path, BEGIN, END))
        open(path, "w").write(doc[:i + len(BEGIN)] + "\n" + t + doc[j:])


if __name__ == "__main__":
    main()
