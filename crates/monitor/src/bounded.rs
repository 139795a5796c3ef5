//! Series of bounded size: a monitor may sample once a second for a day or a week, and its series
//! goes into the run's result. Beyond [`MAX_SAMPLES`], neighbouring samples are merged in pairs (rates
//! and shares averaged, resident memory and other levels at their maximum) and the sampling interval
//! of the series doubles; later samples are merged as many at a time.

use crate::{HostSample, ProcessSample, ResourceSeries, Sample};

/// The most samples a series keeps: twelve minutes at one a second keep every sample.
pub const MAX_SAMPLES: usize = 720;

/// A series being built from samples taken every `interval_s` of the series it starts with.
#[derive(Debug)]
pub struct BoundedSeries {
    series: ResourceSeries,
    /// Samples taken that make one sample of the series.
    per_sample: u32,
    /// Samples taken since the last sample of the series, merged, and how many.
    pending: Option<(Sample, u32)>,
}

impl BoundedSeries {
    /// `series`: the header (its samples, if any, are kept).
    pub fn new(series: ResourceSeries) -> Self {
        BoundedSeries {
            series,
            per_sample: 1,
            pending: None,
        }
    }

    /// The series so far (without the samples still being merged into its next one).
    pub fn series(&self) -> &ResourceSeries {
        &self.series
    }

    pub fn push(&mut self, sample: Sample) {
        let (merged, n) = match self.pending.take() {
            None => (sample, 1),
            Some((before, n)) => (merge(&before, n, &sample, 1), n + 1),
        };
        if n < self.per_sample {
            self.pending = Some((merged, n));
            return;
        }
        self.series.samples.push(merged);
        if self.series.samples.len() >= MAX_SAMPLES {
            self.halve();
        }
    }

    fn halve(&mut self) {
        let samples = std::mem::take(&mut self.series.samples);
        let mut pairs = samples.chunks_exact(2);
        self.series.samples = pairs
            .by_ref()
            .map(|pair| merge(&pair[0], 1, &pair[1], 1))
            .collect();
        // An odd last sample waits for the next one.
        self.pending = pairs
            .remainder()
            .first()
            .map(|s| (s.clone(), self.per_sample));
        self.per_sample *= 2;
        self.series.interval_s *= 2.0;
    }

    /// The series, with the samples still being merged as a last (shorter) sample.
    pub fn finish(mut self) -> ResourceSeries {
        if let Some((last, _)) = self.pending.take() {
            self.series.samples.push(last);
        }
        self.series
    }
}

/// Two neighbouring samples as one, `a` covering `wa` sampling intervals and `b` (the later) `wb`.
fn merge(a: &Sample, wa: u32, b: &Sample, wb: u32) -> Sample {
    let (wa, wb) = (f64::from(wa), f64::from(wb));
    let mean = |x: f64, y: f64| (x * wa + y * wb) / (wa + wb);
    let (ha, hb) = (&a.host, &b.host);
    let busier = if hb.disk_busy > ha.disk_busy { hb } else { ha };
    Sample {
        t_s: b.t_s,
        host: HostSample {
            cpu_user: mean(ha.cpu_user, hb.cpu_user),
            cpu_system: mean(ha.cpu_system, hb.cpu_system),
            cpu_iowait: mean(ha.cpu_iowait, hb.cpu_iowait),
            cpu_steal: mean(ha.cpu_steal, hb.cpu_steal),
            cpu_idle: mean(ha.cpu_idle, hb.cpu_idle),
            mem_used_bytes: ha.mem_used_bytes.max(hb.mem_used_bytes),
            swap_used_bytes: ha.swap_used_bytes.max(hb.swap_used_bytes),
            swap_in_s: mean(ha.swap_in_s, hb.swap_in_s),
            swap_out_s: mean(ha.swap_out_s, hb.swap_out_s),
            net_rx_s: mean(ha.net_rx_s, hb.net_rx_s),
            net_tx_s: mean(ha.net_tx_s, hb.net_tx_s),
            loopback_s: mean(ha.loopback_s, hb.loopback_s),
            disk_read_s: mean(ha.disk_read_s, hb.disk_read_s),
            disk_write_s: mean(ha.disk_write_s, hb.disk_write_s),
            disk_busy: mean(ha.disk_busy, hb.disk_busy),
            busiest_disk: busier.busiest_disk.clone(),
        },
        processes: a
            .processes
            .iter()
            .zip(&b.processes)
            .map(|(pa, pb)| ProcessSample {
                name: pb.name.clone(),
                cpu_cores: mean(pa.cpu_cores, pb.cpu_cores),
                rss_bytes: pa.rss_bytes.max(pb.rss_bytes),
                threads: pa.threads.max(pb.threads),
                read_s: mean(pa.read_s, pb.read_s),
                write_s: mean(pa.write_s, pb.write_s),
                alive: pb.alive,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, cpu: f64, rss: u64) -> Sample {
        Sample {
            t_s: t,
            host: HostSample {
                cpu_user: cpu,
                mem_used_bytes: rss,
                ..Default::default()
            },
            processes: vec![ProcessSample {
                name: "client".into(),
                cpu_cores: cpu,
                rss_bytes: rss,
                alive: true,
                ..Default::default()
            }],
        }
    }

    /// A day of samples keeps at most MAX_SAMPLES, evenly spaced, and the same mean load.
    #[test]
    fn a_long_series_stays_bounded_and_keeps_its_mean_and_peak() {
        let mut b = BoundedSeries::new(ResourceSeries {
            interval_s: 1.0,
            ..Default::default()
        });
        let n = 86_400;
        for i in 1..=n {
            // Busy on even seconds, idle on odd ones; resident memory peaks once.
            let cpu = if i % 2 == 0 { 1.0 } else { 0.0 };
            let rss = if i == 50_000 { 9_000 } else { 1_000 };
            b.push(sample(i as f64, cpu, rss));
            assert!(b.series().samples.len() < MAX_SAMPLES);
        }
        let s = b.finish();
        assert_eq!(s.interval_s, 128.0);
        assert!(s.samples.len() <= MAX_SAMPLES && s.samples.len() > MAX_SAMPLES / 2);
        // Evenly spaced by the new interval (the last one may be shorter).
        for w in s.samples[..s.samples.len() - 1].windows(2) {
            assert_eq!(w[1].t_s - w[0].t_s, 128.0);
        }
        assert_eq!(s.samples.last().unwrap().t_s, n as f64);
        for x in &s.samples {
            assert_eq!(x.processes[0].cpu_cores, 0.5);
            assert_eq!(x.host.cpu_user, 0.5);
        }
        let peak = s.samples.iter().map(|x| x.processes[0].rss_bytes).max();
        assert_eq!(peak, Some(9_000));
    }

    #[test]
    fn a_short_series_keeps_every_sample() {
        let mut b = BoundedSeries::new(ResourceSeries {
            interval_s: 1.0,
            ..Default::default()
        });
        for i in 1..=10 {
            b.push(sample(i as f64, 0.25, 1));
        }
        let s = b.finish();
        assert_eq!((s.samples.len(), s.interval_s), (10, 1.0));
    }
}
