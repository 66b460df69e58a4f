#include "runtime/core/scalar.h"

#include <sstream>

namespace tessera {

std::string Scalar::to_string() const {
  std::ostringstream out;
  switch (kind_) {
    case Kind::kBool: out << (i_ ? "True" : "False"); break;
    case Kind::kInt: out << i_; break;
    case Kind::kFloat: out << d_; break;
  }
  return out.str();
}

}  // namespace tessera
