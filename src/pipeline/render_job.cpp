// The render job lands here (reader -> render -> encode -> writer).
namespace kiln {}
