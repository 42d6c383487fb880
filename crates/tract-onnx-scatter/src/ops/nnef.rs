//! NNEF serialization of this crate's typed ops, exposed the tract way: [`nnef()`], and
//! [`WithScatter`] to add the registry (`registry`) to a caller's `Nnef`. A model typed through
//! [`crate::onnx()`] writes to an NNEF tar with [`nnef()`] and reads back with it. Contract:
//! docs/contract.md, "NNEF".

use tract_nnef::internal::*;

/// The id of this crate's NNEF registry, as `graph.nnef` names it in its
/// `extension tract_registry ...` line.
pub(crate) const REGISTRY_ID: &str = "tract_onnx_scatter";

/// Enables this crate's NNEF registry on a tract NNEF framework: a tar written from a model
/// typed through [`crate::onnx()`] carries `extension tract_registry tract_onnx_scatter`, and
/// an `Nnef` without this registry fails to load it with tract's
/// `Registry not found Identifier("tract_onnx_scatter")`.
///
/// ```no_run
/// use tract_onnx_scatter::tract_onnx::prelude::*;
/// use tract_onnx_scatter::WithScatter;
/// use tract_onnx_scatter::tract_onnx_opl::WithOnnx;
///
/// let model = tract_onnx_scatter::onnx().model_for_path("model.onnx")?.into_typed()?.into_decluttered()?;
/// let framework = tract_onnx_scatter::tract_nnef::nnef().with_onnx().with_scatter();
/// framework.write_to_tar(&model, std::fs::File::create("model.nnef.tar")?)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
pub trait WithScatter {
    /// The framework with the `tract_onnx_scatter` registry enabled.
    fn with_scatter(self) -> Self;
    /// Enables the `tract_onnx_scatter` registry; a framework that already
    /// has it keeps it once.
    fn enable_scatter(&mut self);
}

impl WithScatter for tract_nnef::framework::Nnef {
    fn enable_scatter(&mut self) {
        if !self.registries.iter().any(|r| r.id.0 == REGISTRY_ID) {
            self.registries.push(registry());
        }
    }

    fn with_scatter(mut self) -> Self {
        self.enable_scatter();
        self
    }
}

/// `tract_nnef::nnef()` with tract's ONNX extensions and this crate's
/// registry enabled.
pub fn nnef() -> tract_nnef::framework::Nnef {
    use tract_onnx_opl::WithOnnx;
    tract_nnef::nnef().with_onnx().with_scatter()
}

/// The registry: the NNEF primitive, dumper and loader of every op home
/// that has an NNEF form ([`crate::ops::OpHome::register_nnef`]).
pub(crate) fn registry() -> Registry {
    let mut registry = Registry::new(REGISTRY_ID)
        .with_doc("Extension `tract_onnx_scatter` holds the ONNX scatter ops of the tract-onnx-scatter crate")
        .with_doc("(ScatterElements, Scatter, ScatterND, TensorScatter, ScatterElementsUpdate) with every")
        .with_doc("reduction and element type.")
        .with_doc("")
        .with_doc("Add `extension tract_registry tract_onnx_scatter` to `graph.nnef`, and enable it with")
        .with_doc("`tract_onnx_scatter::WithScatter::with_scatter` (or use `tract_onnx_scatter::nnef()`).");
    for register in crate::ops::HOMES
        .iter()
        .filter_map(|home| home.register_nnef)
    {
        register(&mut registry);
    }
    registry
}

#[cfg(test)]
mod tests {
    //! NNEF: a model typed through `crate::onnx()` writes to an
    //! NNEF tar with `crate::nnef()` and reads back to the same
    //! outputs, for every op × reduction × element type.

    use crate::graph;

    use crate::ops::{ScatterElements, ScatterElementsUpdate, ScatterNd, TensorScatter};
    use crate::opset::ScatterOp;
    use crate::parse::onnx_types::OnnxElement;
    use crate::scatter_kernels::{Reduction, TensorScatterMode, UpdateReduction};
    use crate::site::NodeSite;
    use crate::tract_nnef;
    use crate::tract_onnx::prelude::*;
    use crate::tract_onnx_opl::WithOnnx;
    use crate::{WithScatter, nnef};
    use graph::{Graph, attr_int, attr_string, tensor};

    /// Every element type the ops hold. String is included: tract's NNEF `.dat`
    /// format stores string tensors (a tract vendor item type).
    const TYPES: &[DatumType] = &[
        DatumType::F32,
        DatumType::F16,
        DatumType::F64,
        DatumType::I8,
        DatumType::I16,
        DatumType::I32,
        DatumType::I64,
        DatumType::U8,
        DatumType::U16,
        DatumType::U32,
        DatumType::U64,
        DatumType::Bool,
        DatumType::String,
    ];

    const ONNX_REDUCTIONS: &[Reduction] = &[
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
    ];

    fn legal(dt: DatumType, reduction: impl Into<UpdateReduction>) -> bool {
        let site = NodeSite::new(ScatterOp::ScatterElements, "probe", None);
        crate::ops::run::input_checks::check_reduction_for(
            &site,
            dt,
            OnnxElement::Native,
            reduction.into(),
        )
        .is_ok()
    }

    fn tar(model: &TypedModel) -> Vec<u8> {
        nnef()
            .write_to_tar(model, vec![])
            .unwrap_or_else(|e| panic!("writing NNEF: {e:?}"))
    }

    fn read(bytes: &[u8]) -> TractResult<TypedModel> {
        nnef().model_for_read(&mut &bytes[..])
    }

    /// Writes, reads back, checks both run to the same outputs; returns the
    /// read-back model.
    fn round_trip(model: &TypedModel, inputs: &[Tensor], what: &str) -> TypedModel {
        let bytes = tar(model);
        let back = read(&bytes).unwrap_or_else(|e| panic!("{what}: reading NNEF back: {e:?}"));
        let expected =
            graph::run(model, inputs).unwrap_or_else(|e| panic!("{what}: running original: {e:?}"));
        let got = graph::run(&back, inputs)
            .unwrap_or_else(|e| panic!("{what}: running read-back: {e:?}"));
        assert_eq!(expected.len(), got.len(), "{what}");
        for (e, g) in expected.iter().zip(&got) {
            assert_eq!(e.datum_type(), g.datum_type(), "{what}");
            assert_eq!(**e, **g, "{what}: outputs differ");
        }
        back
    }

    /// data [3, 4], indices [3, 2] with duplicates along axis 1, updates [3, 2].
    fn scatter_elements_case(dt: DatumType, reduction: Reduction) -> (Graph, Vec<Tensor>) {
        let mut attrs = vec![attr_int("axis", 1)];
        if reduction != Reduction::None {
            attrs.push(attr_string("reduction", reduction.as_str()));
        }
        let graph = Graph::new(18)
            .input_c("data", dt, &[3, 4])
            .input_c("indices", DatumType::I64, &[3, 2])
            .input_c("updates", dt, &[3, 2])
            .node(
                "ScatterElements",
                &["data", "indices", "updates"],
                &["out"],
                attrs,
            )
            .output("out", dt);
        let data: Vec<i64> = (0..12).map(|i| i % 3 + 1).collect();
        let inputs = vec![
            tensor(dt, &[3, 4], &data),
            tensor(DatumType::I64, &[3, 2], &[0, 0, 3, -1, 1, 2]),
            tensor(dt, &[3, 2], &[2, 0, 1, 2, 0, 1]),
        ];
        (graph, inputs)
    }

    /// data [4, 3], indices [3, 1] with a duplicate row, updates [3, 3].
    fn scatter_nd_case(dt: DatumType, reduction: Reduction) -> (Graph, Vec<Tensor>) {
        let mut attrs = vec![];
        if reduction != Reduction::None {
            attrs.push(attr_string("reduction", reduction.as_str()));
        }
        let graph = Graph::new(18)
            .input_c("data", dt, &[4, 3])
            .input_c("indices", DatumType::I64, &[3, 1])
            .input_c("updates", dt, &[3, 3])
            .node(
                "ScatterND",
                &["data", "indices", "updates"],
                &["out"],
                attrs,
            )
            .output("out", dt);
        let data: Vec<i64> = (0..12).map(|i| i % 3 + 1).collect();
        let inputs = vec![
            tensor(dt, &[4, 3], &data),
            tensor(DatumType::I64, &[3, 1], &[1, -1, 1]),
            tensor(dt, &[3, 3], &[2, 0, 1, 1, 2, 2, 0, 1, 2]),
        ];
        (graph, inputs)
    }

    fn only_node<O: TypedOp>(model: &TypedModel) -> (&TypedNode, &O) {
        let nodes: Vec<&TypedNode> = model.nodes().iter().filter(|n| n.op_is::<O>()).collect();
        assert_eq!(nodes.len(), 1, "{model}");
        (nodes[0], nodes[0].op_as::<O>().unwrap())
    }

    #[test]
    fn scatter_elements_round_trips_for_every_type_and_reduction() {
        let mut count = 0;
        for &dt in TYPES {
            for &reduction in ONNX_REDUCTIONS.iter().filter(|r| legal(dt, **r)) {
                let what = format!("ScatterElements {dt:?} {reduction}");
                let (graph, inputs) = scatter_elements_case(dt, reduction);
                let model = graph
                    .decluttered()
                    .unwrap_or_else(|e| panic!("{what}: {e:?}"));
                let back = round_trip(&model, &inputs, &what);
                let (node, op) = only_node::<ScatterElements>(&back);
                assert_eq!(
                    (op.axis, op.reduction, op.use_init_val),
                    (1, reduction.into(), true),
                    "{what}"
                );
                assert_eq!(
                    op.site,
                    NodeSite::new(ScatterOp::ScatterElements, node.name.clone(), None),
                    "{what}"
                );
                count += 1;
            }
        }
        // Every type does at least none; numbers do all five.
        assert!(count >= TYPES.len() + 10 * 4, "{count}");
    }

    #[test]
    fn scatter_nd_round_trips_for_every_type_and_reduction() {
        let mut count = 0;
        for &dt in TYPES {
            for &reduction in ONNX_REDUCTIONS.iter().filter(|r| legal(dt, **r)) {
                let what = format!("ScatterND {dt:?} {reduction}");
                let (graph, inputs) = scatter_nd_case(dt, reduction);
                let model = graph
                    .decluttered()
                    .unwrap_or_else(|e| panic!("{what}: {e:?}"));
                let back = round_trip(&model, &inputs, &what);
                let (node, op) = only_node::<ScatterNd>(&back);
                assert_eq!(op.reduction, reduction, "{what}");
                assert_eq!(
                    op.site,
                    NodeSite::new(ScatterOp::ScatterNd, node.name.clone(), None),
                    "{what}"
                );
                count += 1;
            }
        }
        assert!(count >= TYPES.len() + 10 * 4, "{count}");
    }

    #[test]
    fn legacy_scatter_keeps_its_onnx_name() {
        let graph = Graph::new(10)
            .input_c("data", DatumType::F32, &[2, 3])
            .input_c("indices", DatumType::I32, &[2, 1])
            .input_c("updates", DatumType::F32, &[2, 1])
            .node(
                "Scatter",
                &["data", "indices", "updates"],
                &["out"],
                vec![attr_int("axis", -1)],
            )
            .output("out", DatumType::F32);
        let model = graph.decluttered().unwrap();
        let inputs = [
            tensor(DatumType::F32, &[2, 3], &[1, 2, 3, 4, 5, 6]),
            tensor(DatumType::I32, &[2, 1], &[2, 0]),
            tensor(DatumType::F32, &[2, 1], &[9, 8]),
        ];
        let back = round_trip(&model, &inputs, "Scatter-9");
        let (_, op) = only_node::<ScatterElements>(&back);
        assert_eq!(
            (op.site.op, op.axis, op.site.opset),
            (ScatterOp::Scatter, 1, None)
        );
    }

    /// ScatterElements as OpenVINO's ScatterElementsUpdate builds it (mean,
    /// use_init_val false), wired directly: every reduction × use_init_val.
    #[test]
    fn elements_update_semantics_round_trip() {
        let mut count = 0;
        for &dt in &[
            DatumType::F32,
            DatumType::F64,
            DatumType::F16,
            DatumType::I32,
            DatumType::U8,
        ] {
            for reduction in UpdateReduction::ALL.into_iter().filter(|r| legal(dt, *r)) {
                for use_init_val in [true, false] {
                    let what = format!(
                        "ScatterElementsUpdate {dt:?} {reduction} use_init_val={use_init_val}"
                    );
                    let mut model = TypedModel::default();
                    let data = model.add_source("data", dt.fact([3, 4])).unwrap();
                    let indices = model
                        .add_source("indices", DatumType::I64.fact([3, 2]))
                        .unwrap();
                    let updates = model.add_source("updates", dt.fact([3, 2])).unwrap();
                    let site = NodeSite::new(ScatterOp::ScatterElementsUpdate, "seu", None);
                    let op = ScatterElements {
                        site,
                        axis: 1,
                        reduction,
                        use_init_val,
                        onnx_element: OnnxElement::Native,
                        output_pool: None,
                        check_cache: Default::default(),
                    };
                    let out = model
                        .wire_node("seu", op, &[data, indices, updates])
                        .unwrap();
                    model.select_output_outlets(&out).unwrap();
                    let (_, inputs) = scatter_elements_case(dt, Reduction::None);
                    let back = round_trip(&model, &inputs, &what);
                    let (_, op) = only_node::<ScatterElements>(&back);
                    assert_eq!(
                        (op.site.op, op.reduction, op.use_init_val),
                        (ScatterOp::ScatterElementsUpdate, reduction, use_init_val),
                        "{what}"
                    );
                    count += 1;
                }
            }
        }
        assert!(count >= 5 * 2 * 5, "{count}");
    }

    /// past_cache [2, 5, 3], update [2, 2, 3] along axis 1, write_indices [2]
    /// when `with_write`: a circular write wraps past the end.
    fn tensor_scatter_case(
        dt: DatumType,
        mode: TensorScatterMode,
        with_write: bool,
    ) -> (Graph, Vec<Tensor>) {
        let mut node_inputs = vec!["past_cache", "update"];
        let mut graph = Graph::new(24)
            .input_c("past_cache", dt, &[2, 5, 3])
            .input_c("update", dt, &[2, 2, 3]);
        if with_write {
            graph = graph.input_c("write_indices", DatumType::I64, &[2]);
            node_inputs.push("write_indices");
        }
        let graph = graph
            .node(
                "TensorScatter",
                &node_inputs,
                &["present"],
                vec![attr_int("axis", -2), attr_string("mode", mode.as_str())],
            )
            .output("present", dt);
        let cache: Vec<i64> = (0..30).map(|i| i % 7).collect();
        let update: Vec<i64> = (0..12).map(|i| 10 + i).collect();
        let mut inputs = vec![
            tensor(dt, &[2, 5, 3], &cache),
            tensor(dt, &[2, 2, 3], &update),
        ];
        if with_write {
            let starts = match mode {
                TensorScatterMode::Linear => [1, 3],
                TensorScatterMode::Circular => [4, 2],
            };
            inputs.push(tensor(DatumType::I64, &[2], &starts));
        }
        (graph, inputs)
    }

    #[test]
    fn tensor_scatter_round_trips_in_both_modes_with_and_without_write_indices() {
        let mut count = 0;
        for dt in [DatumType::F32, DatumType::F16, DatumType::I64] {
            for mode in [TensorScatterMode::Linear, TensorScatterMode::Circular] {
                for with_write in [true, false] {
                    let what = format!(
                        "TensorScatter {dt:?} {} write_indices={with_write}",
                        mode.as_str()
                    );
                    let (graph, inputs) = tensor_scatter_case(dt, mode, with_write);
                    let model = graph
                        .decluttered()
                        .unwrap_or_else(|e| panic!("{what}: {e:?}"));
                    only_node::<TensorScatter>(&model);
                    let bytes = tar(&model);
                    let graph_nnef = tar_entries(&bytes).remove("graph.nnef").unwrap();
                    assert!(
                        graph_nnef.contains("tract_onnx_tensor_scatter("),
                        "{what}: {graph_nnef}"
                    );
                    assert_eq!(
                        graph_nnef.contains("write_indices = "),
                        with_write,
                        "{what}: {graph_nnef}"
                    );
                    let back = round_trip(&model, &inputs, &what);
                    let (node, op) = only_node::<TensorScatter>(&back);
                    assert_eq!((op.axis, op.mode), (1, mode), "{what}");
                    assert_eq!(node.inputs.len(), 2 + with_write as usize, "{what}");
                    assert_eq!(
                        op.site,
                        NodeSite::new(ScatterOp::TensorScatter, node.name.clone(), None),
                        "{what}"
                    );
                    count += 1;
                }
            }
        }
        assert_eq!(count, 12);
    }

    /// OpenVINO ScatterElementsUpdate with its axis a graph input: the runtime
    /// axis op survives declutter and round-trips as such.
    fn elements_update_runtime_axis_case(reduction: &str, use_init_val: i64) -> TypedModel {
        use crate::tract_onnx::pb::OperatorSetIdProto;
        use prost::Message;
        let graph = Graph::new(18)
            .input_c("data", DatumType::F32, &[3, 4])
            .input_c("indices", DatumType::I64, &[3, 2])
            .input_c("updates", DatumType::F32, &[3, 2])
            .input_c("axis", DatumType::I64, &[])
            .node(
                "ScatterElementsUpdate",
                &["data", "indices", "updates", "axis"],
                &["out"],
                vec![
                    attr_string("reduction", reduction),
                    attr_int("use_init_val", use_init_val),
                ],
            )
            .output("out", DatumType::F32);
        let mut proto = graph.proto();
        proto.opset_import.push(OperatorSetIdProto {
            domain: "org.openvinotoolkit".into(),
            version: 1,
        });
        proto.graph.as_mut().unwrap().node[0].domain = "org.openvinotoolkit".into();
        let bytes = proto.encode_to_vec();
        crate::onnx()
            .model_for_read(&mut &bytes[..])
            .and_then(|m| m.into_typed())
            .and_then(|m| m.into_decluttered())
            .unwrap_or_else(|e| panic!("ScatterElementsUpdate {reduction}: {e:?}"))
    }

    #[test]
    fn elements_update_with_a_runtime_axis_round_trips() {
        for (name, reduction, use_init_val) in [
            ("none", UpdateReduction::Onnx(Reduction::None), 1),
            ("sum", UpdateReduction::Onnx(Reduction::Add), 1),
            ("max", UpdateReduction::Onnx(Reduction::Max), 0),
            ("mean", UpdateReduction::Mean, 0),
            ("mean", UpdateReduction::Mean, 1),
        ] {
            let what = format!("ScatterElementsUpdate {name} use_init_val={use_init_val}");
            let model = elements_update_runtime_axis_case(name, use_init_val);
            only_node::<ScatterElementsUpdate>(&model);
            let bytes = tar(&model);
            let graph_nnef = tar_entries(&bytes).remove("graph.nnef").unwrap();
            assert!(
                graph_nnef.contains("tract_onnx_scatter_elements_update("),
                "{what}: {graph_nnef}"
            );
            let (_, mut inputs) = scatter_elements_case(DatumType::F32, Reduction::None);
            // Indices in range along either axis: [3, 2] into [3, 4].
            inputs[1] = tensor(DatumType::I64, &[3, 2], &[0, 0, 2, -1, 1, 2]);
            for axis in [1i64, 0, -1, -2] {
                let mut inputs = inputs.clone();
                inputs.push(tensor(DatumType::I64, &[], &[axis]));
                let what = format!("{what} axis={axis}");
                let back = round_trip(&model, &inputs, &what);
                let (node, op) = only_node::<ScatterElementsUpdate>(&back);
                assert_eq!(
                    (op.reduction, op.use_init_val),
                    (reduction, use_init_val == 1),
                    "{what}"
                );
                assert_eq!(
                    op.site,
                    NodeSite::new(ScatterOp::ScatterElementsUpdate, node.name.clone(), None),
                    "{what}"
                );
            }
        }
    }

    #[test]
    fn the_tar_declares_the_registry() {
        let (graph, _) = scatter_nd_case(DatumType::F32, Reduction::Add);
        let model = graph.decluttered().unwrap();
        let bytes = tar(&model);
        let mut archive = tar_entries(&bytes);
        let graph_nnef = archive.remove("graph.nnef").expect("graph.nnef in the tar");
        assert!(
            graph_nnef.contains("extension tract_registry tract_onnx_scatter;"),
            "{graph_nnef}"
        );
        assert!(
            graph_nnef.contains("tract_onnx_scatter_nd("),
            "{graph_nnef}"
        );
        assert!(graph_nnef.contains("reduction = \"add\""), "{graph_nnef}");
    }

    /// Text files of a tar archive, by path (a minimal ustar reader: the test
    /// needs no tar crate).
    fn tar_entries(bytes: &[u8]) -> std::collections::HashMap<String, String> {
        let mut entries = std::collections::HashMap::new();
        let mut at = 0;
        while at + 512 <= bytes.len() && bytes[at] != 0 {
            let header = &bytes[at..at + 512];
            let name = String::from_utf8_lossy(&header[..100])
                .trim_end_matches('\0')
                .to_string();
            let size_field = String::from_utf8_lossy(&header[124..136])
                .trim_matches(|c: char| c == '\0' || c == ' ')
                .to_string();
            let size = usize::from_str_radix(&size_field, 8).unwrap();
            let body = &bytes[at + 512..at + 512 + size];
            entries.insert(
                name.trim_start_matches("./").to_string(),
                String::from_utf8_lossy(body).into_owned(),
            );
            at += 512 + size.div_ceil(512) * 512;
        }
        entries
    }

    #[test]
    fn loading_without_the_registry_names_it() {
        let (graph, _) = scatter_elements_case(DatumType::F32, Reduction::None);
        let model = graph.decluttered().unwrap();
        let bytes = tar(&model);
        let without = tract_nnef::nnef().with_onnx();
        let err = without
            .model_for_read(&mut &bytes[..])
            .expect_err("loads without the registry");
        let message = format!("{err:?}");
        assert!(message.contains("tract_onnx_scatter"), "{message}");
        println!("loading without the registry: {message}");
        // And enabling it on the same framework makes it load.
        let with = tract_nnef::nnef().with_onnx().with_scatter();
        with.model_for_read(&mut &bytes[..]).unwrap();
    }

    #[test]
    fn writing_without_the_registry_fails() {
        let (graph, _) = scatter_elements_case(DatumType::F32, Reduction::None);
        let model = graph.decluttered().unwrap();
        let err = tract_nnef::nnef()
            .with_onnx()
            .write_to_tar(&model, vec![])
            .expect_err("writes without the registry");
        let message = format!("{err:?}");
        assert!(message.contains("No serializer found"), "{message}");
        println!("writing without the registry: {message}");
    }

    #[test]
    fn enabling_twice_registers_once() {
        let mut framework = nnef();
        framework.enable_scatter();
        let count = framework
            .registries
            .iter()
            .filter(|r| r.id.0 == "tract_onnx_scatter")
            .count();
        assert_eq!(count, 1);
    }

    #[test]
    fn a_scatter_nd_folded_between_transposes_round_trips_with_its_layout() {
        let dt = DatumType::F32;
        let g = Graph::new(18)
            .input_c("data", dt, &[1, 2, 5, 3])
            .input_c("indices", DatumType::I64, &[1, 1])
            .input_c("updates", dt, &[1, 1, 2, 3])
            .node(
                "Transpose",
                &["data"],
                &["view"],
                vec![graph::attr_ints("perm", &[2, 0, 1, 3])],
            )
            .node(
                "ScatterND",
                &["view", "indices", "updates"],
                &["scattered"],
                vec![],
            )
            .node(
                "Transpose",
                &["scattered"],
                &["out"],
                vec![graph::attr_ints("perm", &[1, 2, 0, 3])],
            )
            .output("out", dt);
        let model = g.decluttered().unwrap();
        let (_, op) = only_node::<ScatterNd>(&model);
        assert_eq!(op.layout.as_deref(), Some(&[2usize, 0, 1, 3][..]));
        let inputs = [
            graph::tensor(dt, &[1, 2, 5, 3], &(0..30).collect::<Vec<_>>()),
            graph::tensor(DatumType::I64, &[1, 1], &[-2]),
            graph::tensor(dt, &[1, 1, 2, 3], &[100, 101, 102, 103, 104, 105]),
        ];
        let back = round_trip(&model, &inputs, "layout");
        let (_, op) = only_node::<ScatterNd>(&back);
        assert_eq!(op.layout.as_deref(), Some(&[2usize, 0, 1, 3][..]));
    }

    #[test]
    fn a_scatter_nd_folded_into_scatter_elements_round_trips_still_naming_the_scatter_nd() {
        // index_copy along axis 2 as the dynamo exporter writes it: cache and
        // k through the same transpose.
        let dt = DatumType::F32;
        let p = [2i64, 0, 1, 3];
        let g = Graph::new(18)
            .input_c("cache", dt, &[1, 2, 5, 3])
            .input_c("rows", DatumType::I64, &[2, 1])
            .input_c("k", dt, &[1, 2, 2, 3])
            .node(
                "Transpose",
                &["cache"],
                &["view"],
                vec![graph::attr_ints("perm", &p)],
            )
            .node(
                "Transpose",
                &["k"],
                &["u"],
                vec![graph::attr_ints("perm", &p)],
            )
            .node("ScatterND", &["view", "rows", "u"], &["scattered"], vec![])
            .node(
                "Transpose",
                &["scattered"],
                &["out"],
                vec![graph::attr_ints("perm", &[1, 2, 0, 3])],
            )
            .output("out", dt);
        let model = g.decluttered().unwrap();
        let (_, op) = only_node::<ScatterElements>(&model);
        assert_eq!((op.axis, op.site.op), (2, ScatterOp::ScatterNd));
        let inputs = [
            graph::tensor(dt, &[1, 2, 5, 3], &(0..30).collect::<Vec<_>>()),
            graph::tensor(DatumType::I64, &[2, 1], &[-1, 1]),
            graph::tensor(dt, &[1, 2, 2, 3], &(100..112).collect::<Vec<_>>()),
        ];
        let back = round_trip(&model, &inputs, "folded index_copy");
        let (_, op) = only_node::<ScatterElements>(&back);
        assert_eq!((op.axis, op.site.op), (2, ScatterOp::ScatterNd));
    }

    /// A scatter computing in bfloat16 (a bfloat16 model's add) keeps that
    /// arithmetic through NNEF: 1 + four updates of 2^-8 stays 1.
    #[test]
    fn a_scatter_computing_in_bfloat16_round_trips_with_its_rounding() {
        let tiny = 1.0f32 / 256.0;
        let site = |op| NodeSite::new(op, "bf16", Some(18));
        let ops: Vec<(Box<dyn TypedOp>, Tensor)> = vec![
            (
                Box::new(ScatterElements {
                    onnx_element: OnnxElement::Bfloat16,
                    ..ScatterElements::onnx(site(ScatterOp::ScatterElements), 0, Reduction::Add)
                }),
                tensor1(&[0i64; 4]),
            ),
            (
                Box::new(ScatterNd {
                    onnx_element: OnnxElement::Bfloat16,
                    ..ScatterNd::onnx(site(ScatterOp::ScatterNd), Reduction::Add)
                }),
                Tensor::from_shape(&[4, 1], &[0i64; 4]).unwrap(),
            ),
        ];
        for (op, indices) in ops {
            let mut model = TypedModel::default();
            let data = model.add_source("data", f32::fact([2])).unwrap();
            let indices = model.add_const("indices", indices).unwrap();
            let updates = model.add_source("updates", f32::fact([4])).unwrap();
            let out = model
                .wire_node("scatter", op, &[data, indices, updates])
                .unwrap();
            model.select_output_outlets(&out).unwrap();
            let inputs = [tensor1(&[1.0f32, 2.0]), tensor1(&[tiny; 4])];
            let back = round_trip(&model, &inputs, "bfloat16 scatter");
            let got = graph::run(&back, &inputs).unwrap();
            assert_eq!(got[0].clone().into_tensor(), tensor1(&[1.0f32, 2.0]));
        }
    }

    /// A scatter of complex data (float pairs on a trailing axis) keeps its
    /// complex arithmetic and its axis in the complex tensor's terms through
    /// NNEF: (1 + 2i)(3 + 4i) = -5 + 10i.
    #[test]
    fn a_scatter_of_complex_data_round_trips_with_complex_multiplication() {
        let site = |op| NodeSite::new(op, "complex", Some(18));
        // data: complex [1, 2] as f32 [1, 2, 2]; the axis is the complex
        // tensor's last (1), not the pair axis.
        let ops: Vec<(Box<dyn TypedOp>, Tensor, Tensor)> = vec![
            (
                Box::new(ScatterElements {
                    onnx_element: OnnxElement::Complex,
                    ..ScatterElements::onnx(site(ScatterOp::ScatterElements), 1, Reduction::Mul)
                }),
                Tensor::from_shape(&[1, 1], &[1i64]).unwrap(),
                Tensor::from_shape(&[1, 1, 2], &[3.0f32, 4.0]).unwrap(),
            ),
            (
                Box::new(ScatterNd {
                    onnx_element: OnnxElement::Complex,
                    ..ScatterNd::onnx(site(ScatterOp::ScatterNd), Reduction::Mul)
                }),
                Tensor::from_shape(&[1, 2], &[0i64, 1]).unwrap(),
                Tensor::from_shape(&[1, 2], &[3.0f32, 4.0]).unwrap(),
            ),
        ];
        for (op, indices, updates) in ops {
            let mut model = TypedModel::default();
            let data = model.add_source("data", f32::fact([1, 2, 2])).unwrap();
            let indices = model.add_const("indices", indices).unwrap();
            let updates_fact = f32::fact(updates.shape());
            let updates_wire = model.add_source("updates", updates_fact).unwrap();
            let out = model
                .wire_node("scatter", op, &[data, indices, updates_wire])
                .unwrap();
            model.select_output_outlets(&out).unwrap();
            let data = Tensor::from_shape(&[1, 2, 2], &[5.0f32, 6.0, 1.0, 2.0]).unwrap();
            let inputs = [data, updates];
            let back = round_trip(&model, &inputs, "complex scatter");
            let got = graph::run(&back, &inputs).unwrap();
            assert_eq!(
                got[0].clone().into_tensor(),
                Tensor::from_shape(&[1, 2, 2], &[5.0f32, 6.0, -5.0, 10.0]).unwrap()
            );
        }
    }
}
