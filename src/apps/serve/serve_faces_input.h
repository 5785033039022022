// What POST /v1/faces and /v1/faces/search read and add: the images of a request (its raw body, or one per
// multipart/form-data part, with their names) and the faces found, added to a named collection.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/serve/face_collections.h"
#include "apps/serve/face_service.h"
#include "apps/serve/http_types.h"

namespace kiln::serve {

struct FacesImageName {
  std::string name;      // the part's name, or ?name= for a raw body
  std::string filename;  // the part's filename ("" for a raw body or a part without one)
};

struct FacesNamedImages {
  std::vector<FaceBatchImage> images;  // a part that is not an image carries its error (answered per part)
  std::vector<FacesImageName> names;
};

// The body as one image: InvalidArgument when empty, UnsupportedFormat (415) naming what the bytes are.
Result<FacesNamedImages> faces_raw_image(const HttpRequest& request);
// One image per part (at most max_images); InvalidArgument for a body that is not multipart or has no part.
Result<FacesNamedImages> faces_multipart_images(const HttpRequest& request, size_t max_images);

// Adds every face of the call's images, in order, to `collection`, and writes into each face's JSON (lists[i][j])
// its "collection_id" (null for a duplicate), "duplicate_of" (null, or the id it duplicates) and
// "duplicate_cosine"; body gets "collection" and "collection_size".
void collection_faces_add(FaceCollections& collections, const std::string& collection,
                          const std::vector<FacesImageName>& names, const FaceCallResult& result,
                          std::vector<nlohmann::json>* lists, nlohmann::json* body);

}  // namespace kiln::serve
