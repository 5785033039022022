"""A real ONNX graph with integer outputs, made with the onnx package for the tests of kiln infer and kiln.Model."""


def integer_model(path):
    """A real ONNX graph with integer outputs: per image its channel means (float32), those means x 10^7 + 1 as int64
    (odd numbers near 10^9, which float32 cannot hold), and the brightest channel as int32."""
    from onnx import TensorProto, helper, save
    constant = lambda name, kind, value: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=helper.make_tensor(name, kind, [], [value]))
    nodes = [helper.make_node("ReduceMean", ["image"], ["mean"], axes=[2, 3], keepdims=0),
             constant("scale", TensorProto.FLOAT, 1e7), helper.make_node("Mul", ["mean", "scale"], ["scaled"]),
             helper.make_node("Cast", ["scaled"], ["whole"], to=TensorProto.INT64),
             constant("one", TensorProto.INT64, 1), helper.make_node("Add", ["whole", "one"], ["codes"]),
             helper.make_node("ArgMax", ["mean"], ["brightest"], axis=1, keepdims=0),
             helper.make_node("Cast", ["brightest"], ["channel"], to=TensorProto.INT32)]
    graph = helper.make_graph(
        nodes, "integers", [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 16, 16])],
        [helper.make_tensor_value_info("codes", TensorProto.INT64, ["N", 3]),
         helper.make_tensor_value_info("channel", TensorProto.INT32, ["N"]),
         helper.make_tensor_value_info("mean", TensorProto.FLOAT, ["N", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    save(model, str(path))
