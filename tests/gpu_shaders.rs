//! Every WGSL pass validates with naga, every file in `shaders/` is embedded, and every
//! GPU-visible struct has the size its WGSL twin expects. Needs no GPU.

use crowdfield::gpu::{shaders, types};

/// Parses and validates one pass's full source (common.wgsl + the pass, exactly the string the
/// host hands to `create_shader_module`), returning naga's rendered diagnostic on failure.
fn validate(name: &str, source: &str) -> Result<naga::Module, String> {
    let module =
        naga::front::wgsl::parse_str(source).map_err(|e| format!("{name}: {}", e.emit_to_string(source)))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .map_err(|e| format!("{name}: {}", e.emit_to_string(source)))?;
    Ok(module)
}

#[test]
fn every_pass_validates_with_naga() {
    // Collect every failure, not just the first, so one run shows all broken passes.
    let mut failures = Vec::new();
    for (name, source) in shaders::ALL {
        match validate(name, source) {
            Ok(module) => {
                if module.entry_points.len() != 1 || module.entry_points[0].name != "main" {
                    failures.push(format!("{name}: expected exactly one entry point named `main`"));
                }
            }
            Err(e) => failures.push(e),
        }
    }
    assert!(
        failures.is_empty(),
        "{} pass(es) fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn naga_check_rejects_a_reserved_identifier() {
    // The check must be able to fail: `active` is a WGSL reserved word (the first bug this
    // test caught once it ran), so a pass declaring it has to be rejected.
    let bad = format!(
        "{}\n@compute @workgroup_size(1) fn main() {{ var active = 0u; active += 1u; }}",
        shaders::COMMON
    );
    let err = validate("bad.wgsl", &bad).expect_err("a reserved identifier must fail validation");
    assert!(err.contains("reserved"), "{err}");
}

#[test]
fn every_shader_file_is_embedded_and_documented() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    files.sort();
    let mut embedded: Vec<String> = shaders::ALL.iter().map(|(n, _)| n.to_string()).collect();
    embedded.push("common.wgsl".to_string());
    embedded.push("local_common.wgsl".to_string());
    embedded.push("fim_common.wgsl".to_string());
    embedded.sort();
    assert_eq!(files, embedded);
    for f in files {
        let text = std::fs::read_to_string(dir.join(&f)).unwrap();
        assert!(
            text.starts_with("// "),
            "{f} must open with a one-line purpose comment"
        );
    }
}

#[test]
fn gpu_struct_sizes_match_wgsl() {
    assert_eq!(std::mem::size_of::<types::GpuFimParams>(), 32);
    assert_eq!(std::mem::size_of::<types::GpuScanParams>(), 16);
    assert_eq!(std::mem::size_of::<types::GpuBinParams>(), 32);
    assert_eq!(std::mem::size_of::<types::GpuSplatParams>(), 32);
    assert_eq!(std::mem::size_of::<types::GpuFieldParams>(), 80);
    assert_eq!(std::mem::size_of::<types::GpuContinuumParams>(), 32);
    // The WGSL side: naga's layout of the same structs.
    let module = naga::front::wgsl::parse_str(shaders::FIM_BLOCK).unwrap();
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).unwrap();
    let mut checked = 0;
    for (handle, ty) in module.types.iter() {
        let expected = match ty.name.as_deref() {
            Some("FimParams") => 32,
            Some("ScanParams") => 16,
            Some("BinParams") => 32,
            Some("SplatParams") => 32,
            Some("FieldParams") => 80,
            Some("ContinuumParams") => 32,
            _ => continue,
        };
        assert_eq!(layouter[handle].size, expected, "{:?}", ty.name);
        checked += 1;
    }
    assert_eq!(checked, 6, "every shared struct was found in the WGSL");
}
