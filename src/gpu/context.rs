//! The GPU context: adapter selection, the device and queue, every pipeline and bind-group
//! layout (built once), and the small helpers that dispatch and read back.
//!
//! The context knows no solver's buffers: each solver defines the type of the buffers it
//! reuses between calls and keeps them in the context's [`BufferSlots`], one slot per type;
//! a [`crate::gpu::ContinuumRun`] owns its buffers outright.

use crate::error::{Error, Result};
use crate::gpu::shaders;
use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex};

/// Workgroup size of the one-dimensional passes (`bin_count`, `splat`, scans).
pub(crate) const LINEAR_WORKGROUP: u32 = 256;
/// Largest workgroup count along one dispatch axis (WebGPU's guaranteed minimum limit).
pub(crate) const MAX_GROUPS_X: u32 = 65535;

/// What the binding of a bind-group layout entry holds.
#[derive(Clone, Copy)]
pub(crate) enum Slot {
    /// A uniform buffer.
    Uniform,
    /// A uniform buffer bound with a dynamic offset (one entry per level or pass).
    UniformDynamic,
    /// A read-only storage buffer.
    Read,
    /// A read-write storage buffer.
    ReadWrite,
}

/// Read-backs so far (of a [`crate::gpu::ContinuumRun`], or of a whole context): how many
/// times the host waited for device memory, and how many bytes it read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReadBacks {
    /// Read-backs (one per buffer read).
    pub count: u64,
    /// Bytes read back.
    pub bytes: u64,
}

/// The adapter a context runs on, as reported to the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterReport {
    /// Adapter name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// Backend, e.g. `Vulkan`.
    pub backend: String,
    /// Device type, e.g. `Cpu` (a software rasteriser), `DiscreteGpu`.
    pub device_type: String,
    /// Driver and driver info as reported.
    pub driver: String,
}

impl AdapterReport {
    /// True for a software rasteriser (a CPU device, e.g. Mesa's llvmpipe/lavapipe).
    pub fn is_software(&self) -> bool {
        self.device_type == format!("{:?}", wgpu::DeviceType::Cpu)
    }
}

impl std::fmt::Display for AdapterReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, {}", self.name, self.backend, self.device_type)?;
        if !self.driver.is_empty() {
            write!(f, ", {}", self.driver)?;
        }
        write!(f, ")")
    }
}

/// Every compute pipeline and bind-group layout, built once when the context starts.
pub(crate) struct Pipelines {
    pub fim_layout: wgpu::BindGroupLayout,
    pub scan_layout: wgpu::BindGroupLayout,
    pub bin_layout: wgpu::BindGroupLayout,
    pub splat_layout: wgpu::BindGroupLayout,
    pub field_layout: wgpu::BindGroupLayout,
    pub window_layout: wgpu::BindGroupLayout,
    pub gradient_layout: wgpu::BindGroupLayout,
    pub velocity_layout: wgpu::BindGroupLayout,
    pub potential_layout: wgpu::BindGroupLayout,
    pub fim_block: wgpu::ComputePipeline,
    pub fim_commit: wgpu::ComputePipeline,
    pub scan_block: wgpu::ComputePipeline,
    pub scan_add: wgpu::ComputePipeline,
    pub bin_count: wgpu::ComputePipeline,
    pub radix_hist: wgpu::ComputePipeline,
    pub radix_scatter: wgpu::ComputePipeline,
    pub splat: wgpu::ComputePipeline,
    pub splat_resolve: wgpu::ComputePipeline,
    pub density_window_rows: wgpu::ComputePipeline,
    pub density_window_cols: wgpu::ComputePipeline,
    pub field_speed: wgpu::ComputePipeline,
    pub field_cost: wgpu::ComputePipeline,
    pub continuum_gradient: wgpu::ComputePipeline,
    pub continuum_velocity: wgpu::ComputePipeline,
    pub continuum_potential: wgpu::ComputePipeline,
}

/// The buffers each solver keeps between calls on one device, one slot per buffer type: the
/// solver that defines the type finds its slot by it ([`BufferSlots::slot`]), so the context
/// holds every solver's buffers without naming them.
#[derive(Default)]
pub(crate) struct BufferSlots {
    slots: Mutex<Vec<(TypeId, Arc<dyn Any + Send + Sync>)>>,
}

impl BufferSlots {
    /// The slot of the buffers of type `B`, empty until the solver first fills it; every call
    /// with the same `B` gives the same slot.
    ///
    /// # Errors
    /// [`Error::Gpu`] when a thread panicked while looking a slot up.
    pub(crate) fn slot<B: Send + 'static>(&self) -> Result<Arc<Mutex<Option<B>>>> {
        let mut slots = self
            .slots
            .lock()
            .map_err(|_| Error::Gpu("buffer slots poisoned".into()))?;
        let id = TypeId::of::<B>();
        let slot = match slots.iter().find(|(t, _)| *t == id) {
            Some((_, slot)) => slot.clone(),
            None => {
                let slot: Arc<dyn Any + Send + Sync> = Arc::new(Mutex::new(None::<B>));
                slots.push((id, slot.clone()));
                slot
            }
        };
        Ok(slot
            .downcast::<Mutex<Option<B>>>()
            .expect("a slot holds the type it is found by"))
    }
}

/// A GPU device with the crowdfield pipelines, ready to run solves.
///
/// Build one with [`GpuContext::new`] and keep it: pipelines are compiled once, and the buffers
/// of each solver are kept and reused (grown when an input is larger). Results stay on the
/// device until a method that returns them reads them back.
pub struct GpuContext {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) pipelines: Pipelines,
    pub(crate) limits: wgpu::Limits,
    /// Edge of the FIM's tiles on this device ([`crate::gpu::choose_fim_tile`]).
    pub(crate) fim_tile: usize,
    /// What the user should know about this device's setup (e.g. a smaller FIM tile).
    notes: Vec<String>,
    report: AdapterReport,
    errors: Arc<Mutex<Vec<String>>>,
    staging: Mutex<Option<wgpu::Buffer>>,
    /// Every read-back through [`GpuContext::read_back`] so far: count, bytes.
    read_log: [std::sync::atomic::AtomicU64; 2],
    /// The buffers each solver reuses between calls, by the solver's buffer type.
    pub(crate) buffers: BufferSlots,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.report)
            .finish()
    }
}

/// Rank of a device type: real GPUs first, software rasterisers last.
fn device_rank(t: wgpu::DeviceType) -> u32 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

/// Rank of a backend: native compute APIs before OpenGL.
fn backend_rank(b: wgpu::Backend) -> u32 {
    match b {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
        _ => 1,
    }
}

impl GpuContext {
    /// Opens the best adapter: a real GPU before a software one, Vulkan/Metal/DX12 before GL.
    ///
    /// `WGPU_BACKEND` (e.g. `vulkan`, `gl`) limits the backends searched and
    /// `WGPU_ADAPTER_NAME` (a case-insensitive substring) picks an adapter by name, as in
    /// `wgpu::util::initialize_adapter_from_env`, except that a name that matches nothing is an
    /// error here, not a panic. Adapters without compute shaders or indirect dispatch are
    /// skipped.
    ///
    /// # Errors
    /// [`Error::Gpu`] when no usable adapter exists or the device cannot be opened.
    pub fn new() -> Result<Self> {
        pollster::block_on(Self::open(true, None))
    }

    /// As [`GpuContext::new`], but asking the device for at most `bytes` of workgroup memory
    /// per workgroup, as an adapter that offers no more would: the FIM then takes the tile that
    /// fits ([`crate::gpu::choose_fim_tile`]) and says so in [`GpuContext::notes`].
    ///
    /// # Errors
    /// As [`GpuContext::new`].
    pub fn with_workgroup_memory_limit(bytes: u32) -> Result<Self> {
        pollster::block_on(Self::open(true, Some(bytes)))
    }

    /// A context for the `auto` backends: as [`GpuContext::new`], but software adapters (a
    /// CPU device such as Mesa's llvmpipe/lavapipe, which runs every GPU pass on the CPU's
    /// cores, far slower than the CPU solvers) are passed over unless `WGPU_ADAPTER_NAME` names
    /// one.
    ///
    /// # Errors
    /// [`Error::Gpu`] as [`GpuContext::new`], and when the only usable adapters are software
    /// ones (the message names them).
    pub fn for_auto() -> Result<Self> {
        pollster::block_on(Self::open(std::env::var_os("WGPU_ADAPTER_NAME").is_some(), None))
    }

    /// What the user should know about how this device was set up, one line each (e.g. that
    /// the FIM uses its smaller tile because the adapter's workgroup memory is too small).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    async fn open(allow_software: bool, workgroup_memory_cap: Option<u32>) -> Result<Self> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let mut adapters: Vec<wgpu::Adapter> = instance
            .enumerate_adapters(wgpu::Backends::all())
            .await
            .into_iter()
            .filter(|a| {
                let flags = a.get_downlevel_capabilities().flags;
                flags.contains(
                    wgpu::DownlevelFlags::COMPUTE_SHADERS | wgpu::DownlevelFlags::INDIRECT_EXECUTION,
                )
            })
            .collect();
        let found: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
        if let Ok(wanted) = std::env::var("WGPU_ADAPTER_NAME") {
            let wanted = wanted.to_lowercase();
            adapters.retain(|a| a.get_info().name.to_lowercase().contains(&wanted));
            if adapters.is_empty() {
                return Err(Error::Gpu(format!(
                    "WGPU_ADAPTER_NAME={wanted:?} matches no adapter with compute shaders (found: {})",
                    if found.is_empty() {
                        "none".to_string()
                    } else {
                        found.join(", ")
                    }
                )));
            }
        }
        if !allow_software {
            let software: Vec<String> = adapters
                .iter()
                .map(|a| a.get_info())
                .filter(|i| i.device_type == wgpu::DeviceType::Cpu)
                .map(|i| i.name)
                .collect();
            adapters.retain(|a| a.get_info().device_type != wgpu::DeviceType::Cpu);
            if adapters.is_empty() && !software.is_empty() {
                return Err(Error::Gpu(format!(
                    "only a software GPU was found ({}), which is slower than the CPU path \
                     (Backend::Gpu uses it anyway)",
                    software.join(", ")
                )));
            }
        }
        adapters.sort_by_key(|a| {
            let info = a.get_info();
            (device_rank(info.device_type), backend_rank(info.backend))
        });
        let Some(adapter) = adapters.into_iter().next() else {
            return Err(Error::Gpu(
                "no GPU adapter with compute shaders found (install a Vulkan driver, e.g. \
                 `apt-get install mesa-vulkan-drivers` for the lavapipe software rasteriser, or \
                 check WGPU_BACKEND)"
                    .to_string(),
            ));
        };
        let info = adapter.get_info();
        // Every limit the adapter offers is requested, the workgroup memory the large FIM tile
        // needs included (WebGPU's default, 16 kB, is too small for it).
        let mut limits = adapter.limits();
        if let Some(cap) = workgroup_memory_cap {
            limits.max_compute_workgroup_storage_size = limits.max_compute_workgroup_storage_size.min(cap);
        }
        let (fim_tile, tile_note) = crate::gpu::choose_fim_tile(limits.max_compute_workgroup_storage_size)?;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("crowdfield.device"),
                required_features: wgpu::Features::empty(),
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| Error::Gpu(format!("cannot open a device on {}: {e}", info.name)))?;
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut v) = sink.lock() {
                v.push(e.to_string());
            }
        }));
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let pipelines = Pipelines::new(&device, fim_tile);
        if let Some(e) = scope.pop().await {
            return Err(Error::Gpu(format!("building the compute pipelines failed: {e}")));
        }
        let report = AdapterReport {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: [info.driver.as_str(), info.driver_info.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" "),
        };
        Ok(Self {
            device,
            queue,
            pipelines,
            limits,
            fim_tile,
            notes: tile_note.into_iter().collect(),
            report,
            errors,
            staging: Mutex::new(None),
            read_log: Default::default(),
            buffers: BufferSlots::default(),
        })
    }

    /// The adapter in use.
    pub fn adapter(&self) -> &AdapterReport {
        &self.report
    }

    /// Every read-back this context made so far, by any method and any caller: how many
    /// times the host waited for device memory, and how many bytes came back.
    pub fn read_back_totals(&self) -> ReadBacks {
        use std::sync::atomic::Ordering::Relaxed;
        ReadBacks {
            count: self.read_log[0].load(Relaxed),
            bytes: self.read_log[1].load(Relaxed),
        }
    }

    /// Waits for the queue, then turns any validation error raised since the last check into
    /// an [`Error::Gpu`].
    pub(crate) fn finish(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Gpu(format!("waiting for the device: {e}")))?;
        let mut errs = self
            .errors
            .lock()
            .map_err(|_| Error::Gpu("error log poisoned".into()))?;
        if errs.is_empty() {
            Ok(())
        } else {
            let msg = errs.join("; ");
            errs.clear();
            Err(Error::Gpu(msg))
        }
    }

    /// Rejects a buffer larger than the device allows, naming what it is for.
    pub(crate) fn check_size(&self, what: &str, bytes: u64) -> Result<()> {
        let max = self
            .limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size);
        if bytes > max {
            return Err(Error::Gpu(format!(
                "{what} needs {bytes} bytes, more than this device's storage-buffer limit of {max} bytes"
            )));
        }
        Ok(())
    }

    /// `queue.write_buffer(dst, offset, data)` with the copy into upload memory split over the
    /// rayon threads: wgpu copies each slice before taking the queue's lock, so slices of a
    /// large array (4 MB per 10^6 coordinates) are copied on every core.
    pub(crate) fn write_buffer_parallel<T: bytemuck::Pod + Sync>(
        &self,
        dst: &wgpu::Buffer,
        offset: u64,
        data: &[T],
    ) {
        use rayon::prelude::*;
        // wgpu's writes start and end on 4-byte boundaries: so does every slice.
        const { assert!(std::mem::size_of::<T>().is_multiple_of(4)) };
        debug_assert_eq!(offset % 4, 0);
        /// Elements per slice, at least: below this one copy does it all.
        const MIN_SLICE: usize = 1 << 16;
        let slice = data.len().div_ceil(rayon::current_num_threads()).max(MIN_SLICE);
        data.par_chunks(slice).enumerate().for_each(|(k, part)| {
            let at = offset + (k * slice * std::mem::size_of::<T>()) as u64;
            self.queue.write_buffer(dst, at, bytemuck::cast_slice(part));
        });
    }

    /// A storage buffer of at least `bytes` (4 minimum) that can be written and copied from.
    pub(crate) fn storage(&self, label: &str, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }

    /// A uniform buffer of `bytes` (written with `queue.write_buffer`).
    pub(crate) fn uniform(&self, label: &str, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(16),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Stride between dynamic-offset uniform entries.
    pub(crate) fn uniform_stride(&self) -> u64 {
        u64::from(self.limits.min_uniform_buffer_offset_alignment).max(256)
    }

    /// Copies `count` elements of `T` from `src` (starting at byte `offset`) to the host,
    /// through one staging buffer kept across calls. Waits for all work submitted so far.
    pub(crate) fn read_back<T: bytemuck::Pod>(
        &self,
        src: &wgpu::Buffer,
        offset: u64,
        count: usize,
    ) -> Result<Vec<T>> {
        self.read_back_with(src, offset, count, <[T]>::to_vec)
    }

    /// [`GpuContext::read_back`] handing the mapped elements to `use_them` instead of copying
    /// them into a vector (for large arrays the copy is a pass over memory of its own).
    pub(crate) fn read_back_with<T: bytemuck::Pod, R>(
        &self,
        src: &wgpu::Buffer,
        offset: u64,
        count: usize,
        use_them: impl FnOnce(&[T]) -> R,
    ) -> Result<R> {
        let bytes = (count * std::mem::size_of::<T>()) as u64;
        if bytes == 0 {
            return Ok(use_them(&[]));
        }
        let mut staging = self
            .staging
            .lock()
            .map_err(|_| Error::Gpu("staging buffer poisoned".into()))?;
        if staging.as_ref().is_none_or(|b| b.size() < bytes) {
            *staging = Some(self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("crowdfield.readback"),
                size: bytes.next_power_of_two(),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        let staging = staging.as_ref().expect("staging buffer was just created");
        self.read_log[0].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.read_log[1].fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(src, offset, staging, 0, bytes);
        self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, 0..bytes, move |r| {
            let _ = tx.send(r);
        });
        self.finish()?;
        rx.recv()
            .map_err(|_| Error::Gpu("read-back callback never ran".into()))?
            .map_err(|e| Error::Gpu(format!("mapping the read-back buffer: {e}")))?;
        let out = {
            let view = staging
                .get_mapped_range(0..bytes)
                .map_err(|e| Error::Gpu(format!("reading the mapped buffer: {e}")))?;
            use_them(bytemuck::cast_slice::<u8, T>(&view))
        };
        staging.unmap();
        Ok(out)
    }
}

/// Encodes a compute pass named `label` that runs `pipeline` once over `threads` threads
/// ([`dispatch_linear`]) with `bind_group` as its group 0.
pub(crate) fn encode_linear_pass(
    encoder: &mut wgpu::CommandEncoder,
    label: &str,
    pipeline: &wgpu::ComputePipeline,
    bind_group: &wgpu::BindGroup,
    threads: u32,
) {
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(label),
        timestamp_writes: None,
    });
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, bind_group, &[]);
    dispatch_linear(&mut pass, threads);
}

/// Dispatches enough `LINEAR_WORKGROUP`-wide workgroups for `threads` threads, folding counts
/// above the per-axis limit into y (the shaders index `gid.y * nwg.x * 256 + gid.x`).
pub(crate) fn dispatch_linear(pass: &mut wgpu::ComputePass<'_>, threads: u32) {
    let groups = threads.div_ceil(LINEAR_WORKGROUP);
    if groups == 0 {
        return;
    }
    let x = groups.min(MAX_GROUPS_X);
    pass.dispatch_workgroups(x, groups.div_ceil(x), 1);
}

pub(crate) fn layout(device: &wgpu::Device, label: &str, slots: &[Slot]) -> wgpu::BindGroupLayout {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = slots
        .iter()
        .enumerate()
        .map(|(i, s)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match s {
                    Slot::Uniform | Slot::UniformDynamic => wgpu::BufferBindingType::Uniform,
                    Slot::Read => wgpu::BufferBindingType::Storage { read_only: true },
                    Slot::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: matches!(s, Slot::UniformDynamic),
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

pub(crate) fn pipeline(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    layout: &wgpu::BindGroupLayout,
) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(layout)],
        immediate_size: 0,
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

impl Pipelines {
    fn new(device: &wgpu::Device, fim_tile: usize) -> Self {
        use Slot::*;
        let fim_layout = layout(
            device,
            "crowdfield.fim",
            &[
                Uniform,
                UniformDynamic,
                Read,
                Read,
                ReadWrite,
                ReadWrite,
                ReadWrite,
                ReadWrite,
                ReadWrite,
                ReadWrite,
            ],
        );
        let fim_source = |s: &str| crate::gpu::fim_pass_source(s, fim_tile);
        let scan_layout = layout(device, "crowdfield.scan", &[UniformDynamic, ReadWrite]);
        let bin_layout = layout(
            device,
            "crowdfield.bins",
            &[
                UniformDynamic,
                Read,
                Read,
                ReadWrite,
                ReadWrite,
                ReadWrite,
                ReadWrite,
                ReadWrite,
                ReadWrite,
            ],
        );
        let splat_layout = layout(
            device,
            "crowdfield.splat",
            &[Uniform, Read, Read, Read, Read, ReadWrite, ReadWrite],
        );
        let field_layout = layout(
            device,
            "crowdfield.fields",
            &[Uniform, Read, Read, Read, Read, ReadWrite, ReadWrite],
        );
        let window_layout = layout(
            device,
            "crowdfield.density_window",
            &[Uniform, Read, Read, ReadWrite],
        );
        let gradient_layout = layout(
            device,
            "crowdfield.continuum.gradient",
            &[Uniform, Read, Read, ReadWrite],
        );
        let velocity_layout = layout(
            device,
            "crowdfield.continuum.velocity",
            &[Uniform, Read, Read, Read, Read, Read, ReadWrite],
        );
        let potential_layout = layout(
            device,
            "crowdfield.continuum.potential",
            &[Uniform, Read, Read, Read, ReadWrite],
        );
        Self {
            continuum_potential: pipeline(
                device,
                "crowdfield.continuum.potential",
                shaders::CONTINUUM_POTENTIAL,
                &potential_layout,
            ),
            continuum_gradient: pipeline(
                device,
                "crowdfield.continuum.gradient",
                shaders::CONTINUUM_GRADIENT,
                &gradient_layout,
            ),
            continuum_velocity: pipeline(
                device,
                "crowdfield.continuum.velocity",
                shaders::CONTINUUM_VELOCITY,
                &velocity_layout,
            ),
            density_window_rows: pipeline(
                device,
                "crowdfield.density_window.rows",
                shaders::DENSITY_WINDOW_ROWS,
                &window_layout,
            ),
            density_window_cols: pipeline(
                device,
                "crowdfield.density_window.cols",
                shaders::DENSITY_WINDOW_COLS,
                &window_layout,
            ),
            field_speed: pipeline(
                device,
                "crowdfield.fields.speed",
                shaders::FIELD_SPEED,
                &field_layout,
            ),
            field_cost: pipeline(
                device,
                "crowdfield.fields.cost",
                shaders::FIELD_COST,
                &field_layout,
            ),
            fim_block: pipeline(
                device,
                "crowdfield.fim.block",
                &fim_source(shaders::FIM_BLOCK),
                &fim_layout,
            ),
            fim_commit: pipeline(
                device,
                "crowdfield.fim.commit",
                &fim_source(shaders::FIM_COMMIT),
                &fim_layout,
            ),
            scan_block: pipeline(device, "crowdfield.scan.block", shaders::SCAN_BLOCK, &scan_layout),
            scan_add: pipeline(device, "crowdfield.scan.add", shaders::SCAN_ADD, &scan_layout),
            bin_count: pipeline(device, "crowdfield.bins.count", shaders::BIN_COUNT, &bin_layout),
            radix_hist: pipeline(
                device,
                "crowdfield.bins.radix_hist",
                shaders::RADIX_HIST,
                &bin_layout,
            ),
            radix_scatter: pipeline(
                device,
                "crowdfield.bins.radix_scatter",
                shaders::RADIX_SCATTER,
                &bin_layout,
            ),
            splat: pipeline(device, "crowdfield.splat", shaders::SPLAT, &splat_layout),
            splat_resolve: pipeline(
                device,
                "crowdfield.splat.resolve",
                shaders::SPLAT_RESOLVE,
                &splat_layout,
            ),
            fim_layout,
            scan_layout,
            bin_layout,
            splat_layout,
            field_layout,
            window_layout,
            gradient_layout,
            velocity_layout,
            potential_layout,
        }
    }
}

/// Builds a bind group binding whole buffers in order.
pub(crate) fn bind_group(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    buffers: &[(&wgpu::Buffer, Option<u64>)],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(i, (b, size))| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: b,
                offset: 0,
                size: size.and_then(wgpu::BufferSize::new),
            }),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_buffer_type_has_one_slot_of_its_own() {
        let slots = BufferSlots::default();
        *slots.slot::<Vec<u32>>().unwrap().lock().unwrap() = Some(vec![7]);
        *slots.slot::<String>().unwrap().lock().unwrap() = Some("kept".to_string());
        assert_eq!(*slots.slot::<Vec<u32>>().unwrap().lock().unwrap(), Some(vec![7]));
        assert_eq!(
            slots.slot::<String>().unwrap().lock().unwrap().as_deref(),
            Some("kept")
        );
        assert!(slots.slot::<Vec<u64>>().unwrap().lock().unwrap().is_none());
        assert!(Arc::ptr_eq(
            &slots.slot::<String>().unwrap(),
            &slots.slot::<String>().unwrap()
        ));
    }
}
