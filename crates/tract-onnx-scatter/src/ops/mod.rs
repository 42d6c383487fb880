//! Typed ops: what a tract `TypedModel` holds once the ONNX graph is typed.

pub mod scatter_elements;
pub mod scatter_nd;
pub mod shapes;
pub mod types;

pub use scatter_elements::ScatterElements;
pub use scatter_nd::ScatterNd;
