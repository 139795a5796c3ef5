//! Series of other hosts: an external deployment's `[external.monitors]` commands run during a phase.
//! Alone in its test binary, so that no other test competes with the burner for a core.

use std::process::Command;

mod common;
use common::*;

/// An external deployment's monitor command (here `scalebench monitor --stream` on this host, as
/// ssh would run it on a database host) is collected with the result and counts in the verdict.
#[test]
fn series_of_other_hosts_are_collected_and_name_the_bound() {
    let dir = test_dir();
    // A stand-in for the database server on the other host: a process burning a core.
    let burner = Command::new("sh")
        .args(["-c", "(while :; do :; done) >/dev/null 2>&1 & echo $!"])
        .output()
        .unwrap();
    let burner: u32 = String::from_utf8_lossy(&burner.stdout)
        .trim()
        .parse()
        .unwrap();
    let file = dir.path().join("ext.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"ext-monitored\"\ndatabase = \"external\"\n[external]\nurl = \"sqlite://{}/ext.db\"\n\
             [external.monitors]\ndbhost = \"'{}' monitor --stream --interval 250ms --link-mbit 1000 --process server={burner}\"\n",
            dir.path().display(),
            env!("CARGO_BIN_EXE_scalebench")
        ),
    )
    .unwrap();
    let clusters = dir.path().join("clusters");
    let (file_s, clusters_s) = (file.to_str().unwrap(), clusters.to_str().unwrap());
    let up = scalebench(&["cluster", "up", file_s, "--clusters-dir", clusters_s]);
    assert!(up.status.success(), "{}", stderr(&up));
    let out = dir.path().join("r.json");
    let o = scalebench(&[
        "run",
        "--deployment",
        file_s,
        "--clusters-dir",
        clusters_s,
        "--create-schema",
        "--load",
        "--duration",
        "3s",
        "--target",
        "100",
        "-p",
        "recordcount=100",
        "--output",
        out.to_str().unwrap(),
    ]);
    // The burner this test started.
    signal(burner as i32, Signal::SIGKILL);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json(&out);
    let phase = r["phases"].as_array().unwrap().last().unwrap().clone();
    // Its deployment names no data directories: no space on disk (issue 44: not "0.0 MB on 0
    // node(s)"), and `cluster space` says what is missing.
    assert!(phase["space"].is_null(), "{}", phase["space"]);
    let space = scalebench(&["cluster", "space", file_s, "--clusters-dir", clusters_s]);
    assert_eq!(space.status.code(), Some(2), "{}", stderr(&space));
    assert!(stderr(&space).contains("data_dirs"), "{}", stderr(&space));
    let remote = &phase["remote_resources"][0];
    assert_eq!(remote["host"], "dbhost", "{phase}");
    let samples = remote["series"]["samples"].as_array().unwrap();
    assert!(samples.len() >= 8, "{} samples", samples.len());
    // The host's link capacity comes with the stream's header, for the network verdict.
    assert_eq!(remote["series"]["link_bytes_s"], 125e6);
    let busiest = samples
        .iter()
        .map(|s| s["processes"][0]["cpu_cores"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(
        busiest > 0.5,
        "the server's cpu on the other host: {busiest}"
    );
    // Its report charts each KPI with one line per machine.
    let html = dir.path().join("r.html");
    let csv = dir.path().join("csv");
    let rep = scalebench(&[
        "report",
        out.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
        "--csv-dir",
        csv.to_str().unwrap(),
    ]);
    assert!(rep.status.success(), "{}", stderr(&rep));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("Space on disk"), "a space of nothing");
    for kpi in ["cpu", "iowait", "net", "disk", "mem"] {
        let chart = std::fs::read_dir(&csv)
            .unwrap()
            .flatten()
            .find(|f| {
                f.file_name()
                    .to_string_lossy()
                    .ends_with(&format!("-{kpi}-hosts.csv"))
            })
            .unwrap_or_else(|| panic!("no {kpi} chart per machine"));
        let text = std::fs::read_to_string(chart.path()).unwrap();
        for machine in ["this host", "dbhost"] {
            assert!(text.contains(machine), "{kpi}: no line for {machine}");
        }
    }
    // The verdict weighs the other host's series: it names the server when the server held a core
    // through the window and nothing saturated here first (this host's own saturation comes first,
    // by design); when the server got less than that, its figures are still part of the evidence.
    let v = &phase["bounded_by"];
    let evidence = v["evidence"].as_str().unwrap_or("");
    let mean = samples
        .iter()
        .map(|s| s["processes"][0]["cpu_cores"].as_f64().unwrap())
        .sum::<f64>()
        / samples.len() as f64;
    // Every saturated resource is named (issue 29): a host busy with other work is named beside
    // the server, not instead of it.
    let server_named = v["bounds"]
        .as_array()
        .is_some_and(|b| b.iter().any(|b| b["what"] == "cpu of server on dbhost"));
    // A run that kept its target rate was bounded by that rate; the server's saturated core is
    // then named in the evidence beside it.
    let target_kept_and_server_named =
        v["resource"] == "target" && evidence.contains("cpu of server on dbhost");
    assert!(
        server_named
            || target_kept_and_server_named
            || (v["resource"] != "none" && !evidence.contains("dbhost"))
            || (mean < 0.9 && evidence.contains("dbhost: ") && evidence.contains("server")),
        "{v} (server mean {mean:.2} cores)"
    );
}
