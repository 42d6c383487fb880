use tract_onnx_scatter::tract_onnx::prelude::*;

/// A Keras GRU layer exported by tf2onnx (an ONNX `Loop` with a symbolic
/// batch and time), 12 KB, next to this file: the example ships its model.
const MODEL: &[u8] = include_bytes!("keras_gru.onnx");

fn main() -> TractResult<()> {
    let model = tract_onnx_scatter::onnx()
        .model_for_read(&mut &MODEL[..])?
        .into_optimized()?
        .into_runnable()?;
    let x = Tensor::zero::<f32>(&[2, 10, 4])?; // batch 2, 10 steps, 4 features
    let outputs = model.run(tvec!(x.into_tvalue()))?;
    let y = outputs[0].to_plain_array_view::<f32>()?;
    assert_eq!(y.shape(), &[2, 10, 6]);
    println!("GRU output of shape {:?}", y.shape());
    Ok(())
}
