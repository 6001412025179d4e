//! `--sweep NAME=V1,V2,…`: one launch per value of a scalar argument, with
//! the array lengths the parameter file writes as expressions over the
//! arguments (`len = "w * (h + 1)"`) evaluated again for each. Grid, block
//! and the lengths written as plain numbers stay as they are.

use copper::sim::params::LaunchSpec;

use super::error::SweepError;

/// A parsed `--sweep`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    /// The scalar argument swept.
    pub name: String,
    /// Its values, in the order given.
    pub values: Vec<u64>,
}

/// Parses `NAME=V1,V2,…` (positive integers).
pub fn parse(text: &str) -> Result<Sweep, SweepError> {
    let (name, values) = text
        .split_once('=')
        .ok_or_else(|| SweepError::Syntax(text.to_string()))?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(SweepError::Name(name.to_string()));
    }
    let values = values
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| match v.parse::<u64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(SweepError::Value(v.to_string())),
        })
        .collect::<Result<Vec<u64>, SweepError>>()?;
    if values.is_empty() {
        return Err(SweepError::NoValues(name.to_string()));
    }
    Ok(Sweep {
        name: name.to_string(),
        values,
    })
}

/// The launches of the sweep, from `base` (which must take the argument).
pub fn launches(base: &LaunchSpec, sweep: &Sweep) -> Result<Vec<LaunchSpec>, SweepError> {
    if !base.args.contains_key(&sweep.name) {
        return Err(SweepError::NotAnArgument(sweep.name.clone()));
    }
    sweep
        .values
        .iter()
        .map(|&v| {
            base.with_arg(&sweep.name, v as f64)
                .map_err(|source| SweepError::Length {
                    name: sweep.name.clone(),
                    value: v,
                    source: Box::new(source),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use copper::sim::params::ParamFile;

    #[test]
    fn parses_sizes() {
        assert_eq!(
            parse("h=256, 512,1024").unwrap(),
            Sweep {
                name: "h".into(),
                values: vec![256, 512, 1024]
            }
        );
        for (bad, why) in [
            ("h=", "at least one value"),
            ("h", "not NAME=V1"),
            ("=4", "not an argument name"),
            ("h w=4", "not an argument name"),
            ("h=-5", "not a positive integer"),
            ("h=0", "not a positive integer"),
            ("h=1.5", "not a positive integer"),
            ("h=abc", "not a positive integer"),
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn lengths_follow_the_swept_argument() {
        let p = ParamFile::from_toml(
            "[kernel.k]\ngrid=[4]\nblock=[256]\n[kernel.k.args]\nw=1024\nh=64\n\
             [kernel.k.arrays.A]\nlen=1024\n[kernel.k.arrays.B]\nlen=\"w * h\"\n",
        )
        .unwrap();
        let base = &p.kernel["k"];
        let runs = launches(base, &parse("h=2,8").unwrap()).unwrap();
        let lens: Vec<(u64, u64)> = runs
            .iter()
            .map(|s| (s.arrays["A"].len, s.arrays["B"].len))
            .collect();
        assert_eq!(lens, vec![(1024, 2048), (1024, 8192)]);
        assert_eq!(runs[1].args["h"], 8.0);
        assert_eq!(runs[1].grid, vec![4]);
        assert!(launches(base, &parse("x=1").unwrap())
            .unwrap_err()
            .to_string()
            .contains("not one of its scalar arguments"));
    }
}
