// The Open Inference Protocol's gRPC messages to and from what ModelService takes and gives: the input tensor's
// values from raw_input_contents or from the typed contents field of its datatype, and the outputs into
// raw_output_contents, as Triton answers.
#pragma once

#include <string>
#include <vector>

#include "apps/serve/serve_parse.h"
#include "grpc_service.pb.h"
#include "kiln/infer.h"
#include "kiln/status.h"

namespace kiln::serve {

// The request's input `index`; InvalidArgument with the reason (a bad shape, an unserved datatype, a value or byte
// count that does not match the shape, contents given twice).
Result<InferInputTensor> grpc_input_tensor(const inference::ModelInferRequest& request, int index);

// Every output, or those named in `wanted`, in the model's order.
void grpc_outputs_fill(const std::vector<Tensor>& outputs, const std::vector<std::string>& wanted,
                       inference::ModelInferResponse* response);

}  // namespace kiln::serve
