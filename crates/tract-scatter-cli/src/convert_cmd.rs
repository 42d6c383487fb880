//! `tract-scatter convert MODEL --nnef OUT`: the decluttered model as NNEF,
//! written with the plugin's registry (`tract_onnx_scatter::nnef()`), so
//! its scatter ops serialize and read back.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::Failed;
use crate::cli::ConvertArgs;
use crate::model::{Engine, load};

pub fn run(args: ConvertArgs) -> Result<ExitCode> {
    let out = &args.nnef;
    let tar = out.extension().is_some_and(|e| e == "tar");
    if !tar && out.exists() {
        bail!(
            "--nnef {}: already exists (expected a new directory, or a path ending in .tar)",
            out.display()
        );
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        bail!(
            "--nnef {}: no such directory {} (create it first)",
            out.display(),
            parent.display()
        );
    }
    let loaded = load(&args.model, Engine::of(&args.model), None)?;
    let nnef = tract_onnx_scatter::nnef();
    let written = if tar {
        let file =
            std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?;
        nnef.write_to_tar(&loaded.typed, file).map(|_| ())
    } else {
        nnef.write_to_dir(&loaded.typed, out)
    };
    if let Err(e) = written {
        // No half-written output; an op without NNEF form is the model's
        // failure, not a usage error.
        if tar {
            let _ = std::fs::remove_file(out);
        } else {
            let _ = std::fs::remove_dir_all(out);
        }
        return Err(
            Failed(e.context(format!("writing {} as NNEF", args.model.model.display()))).into(),
        );
    }
    println!(
        "wrote {} ({} nodes, decluttered) as NNEF {} {}",
        args.model.model.display(),
        loaded.typed.nodes().len(),
        if tar { "archive" } else { "directory" },
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}
