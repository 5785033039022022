// Declared settings: parsing and checking per type, ranges and choices, defaults from the config's default state,
// nested fields, the environment, and the text of values.
#include <gtest/gtest.h>

#include <map>

#include "kiln/params.h"

namespace kiln {
namespace {

enum class Color : uint8_t { kRed = 0, kBlue };
const char* color_name(Color c) { return c == Color::kRed ? "red" : "blue"; }
Result<Color> color_parse(const std::string& name) {
  if (name == "red") return Color::kRed;
  if (name == "blue" || name == "navy") return Color::kBlue;
  return invalid_argument("unknown color '" + name + "'");
}

struct Inner {
  int32_t count = 4;
};

struct Config {
  int64_t size = 10;
  float scale = 0.485f;
  bool quiet = false;
  std::string path;
  Color color = Color::kRed;
  std::vector<double> weights{1.0, 2.0};
  Inner inner;
};

const ParamTable<Inner>& inner_params() {
  static const ParamTable<Inner> t = [] {
    ParamTable<Inner> p;
    p.add({.name = "count", .help = "How many", .min = 1, .max = 8, .env = "TEST_COUNT"},
          [](Inner& i) -> int32_t& { return i.count; });
    return p;
  }();
  return t;
}

const ParamTable<Config>& params() {
  static const ParamTable<Config> t = [] {
    ParamTable<Config> p;
    p.add({.name = "size", .help = "Size", .min = 1, .max = 100}, [](Config& c) -> int64_t& { return c.size; });
    p.add({.name = "scale", .help = "Scale"}, [](Config& c) -> float& { return c.scale; });
    p.add({.name = "quiet", .help = "Quiet"}, [](Config& c) -> bool& { return c.quiet; });
    p.add({.name = "path", .help = "Path"}, [](Config& c) -> std::string& { return c.path; });
    p.add_choice({.name = "color", .help = "Color", .choices = {"red", "blue"}},
                 [](Config& c) -> Color& { return c.color; }, color_parse, color_name);
    p.add({.name = "weights", .help = "Weights", .min = 0, .min_count = 1, .max_count = 3},
          [](Config& c) -> std::vector<double>& { return c.weights; });
    p.include(inner_params(), [](Config& c) -> Inner& { return c.inner; });
    return p;
  }();
  return t;
}

Status set_text(Config& c, const std::string& name, const std::string& text) {
  const ParamSet::Entry* e = params().find(name);
  if (e == nullptr) return invalid_argument("no " + name);
  KILN_TRY_ASSIGN(const ParamValue v, param_parse(e->spec, text, param_flag(name)));
  return params().set(c, name, v, param_flag(name));
}

TEST(Params, TypesComeFromTheFieldsAndDefaultsFromTheDefaultState) {
  const auto& p = params();
  EXPECT_EQ(p.find("size")->spec.type, ParamType::kInt);
  EXPECT_EQ(p.find("scale")->spec.type, ParamType::kFloat);
  EXPECT_EQ(p.find("quiet")->spec.type, ParamType::kBool);
  EXPECT_EQ(p.find("path")->spec.type, ParamType::kString);
  EXPECT_EQ(p.find("color")->spec.type, ParamType::kChoice);
  EXPECT_EQ(p.find("weights")->spec.type, ParamType::kFloats);
  EXPECT_EQ(param_text(p.default_value(*p.find("size"))), "10");
  EXPECT_EQ(param_text(p.default_value(*p.find("scale"))), "0.485");  // the float's shortest text
  EXPECT_EQ(param_text(p.default_value(*p.find("color"))), "red");
  EXPECT_EQ(param_text(p.default_value(*p.find("weights"))), "1,2");
  EXPECT_EQ(param_text(p.default_value(*p.find("count"))), "4");
  EXPECT_EQ(param_flag("batch_size"), "--batch-size");
}

TEST(Params, TextParsesIntoTheFields) {
  Config c;
  ASSERT_TRUE(set_text(c, "size", "42").is_ok());
  ASSERT_TRUE(set_text(c, "scale", "0.25").is_ok());
  ASSERT_TRUE(set_text(c, "quiet", "yes").is_ok());
  ASSERT_TRUE(set_text(c, "path", "a b.txt").is_ok());
  ASSERT_TRUE(set_text(c, "color", "navy").is_ok());  // an alias the parser accepts
  ASSERT_TRUE(set_text(c, "weights", "0.5, 1.5,2").is_ok());
  ASSERT_TRUE(set_text(c, "count", "7").is_ok());
  EXPECT_EQ(c.size, 42);
  EXPECT_FLOAT_EQ(c.scale, 0.25f);
  EXPECT_TRUE(c.quiet);
  EXPECT_EQ(c.path, "a b.txt");
  EXPECT_EQ(c.color, Color::kBlue);
  EXPECT_EQ(c.weights, (std::vector<double>{0.5, 1.5, 2.0}));
  EXPECT_EQ(c.inner.count, 7);
}

TEST(Params, BadValuesNameTheSetting) {
  Config c;
  for (const auto& [name, text] : std::map<std::string, std::string>{{"size", "12y"},
                                                                     {"size", "0"},
                                                                     {"size", "101"},
                                                                     {"scale", "fast"},
                                                                     {"scale", "inf"},
                                                                     {"quiet", "maybe"},
                                                                     {"color", "green"},
                                                                     {"weights", "1,2,3,4"},
                                                                     {"weights", "1,-2"},
                                                                     {"count", "9"}}) {
    const Status s = set_text(c, name, text);
    EXPECT_EQ(s.code(), Errc::kInvalidArgument) << name << "=" << text;
    EXPECT_NE(s.message().find(param_flag(name)), std::string::npos) << s.message();
  }
  EXPECT_EQ(c.size, 10);  // nothing was stored
  EXPECT_EQ(params().set(c, "nope", ParamValue(int64_t{1}), "nope").code(), Errc::kInvalidArgument);
}

TEST(Params, ValuesOfOtherOriginsConvertWhereLossless) {
  Config c;
  EXPECT_TRUE(params().set(c, "scale", ParamValue(int64_t{2}), "scale").is_ok());  // an integer for a number
  EXPECT_FLOAT_EQ(c.scale, 2.0f);
  EXPECT_TRUE(params().set(c, "size", ParamValue(3.0), "size").is_ok());  // a whole number for an integer
  EXPECT_EQ(c.size, 3);
  EXPECT_EQ(params().set(c, "size", ParamValue(3.5), "size").code(), Errc::kInvalidArgument);
  EXPECT_TRUE(params().set(c, "weights", ParamValue(0.75), "weights").is_ok());  // one number for a list
  EXPECT_EQ(c.weights, (std::vector<double>{0.75}));
  EXPECT_EQ(params().set(c, "quiet", ParamValue(int64_t{1}), "quiet").code(), Errc::kInvalidArgument);
  EXPECT_EQ(params().set(c, "path", ParamValue(true), "path").code(), Errc::kInvalidArgument);
}

TEST(Params, EnvironmentAndSpecUpdates) {
  Config c;
  std::map<std::string, std::string> env{{"TEST_COUNT", "2"}};
  auto lookup = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  ASSERT_TRUE(params().apply_env(&c, lookup).is_ok());
  EXPECT_EQ(c.inner.count, 2);
  env["TEST_COUNT"] = "0";
  const Status s = params().apply_env(&c, lookup);
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.message().find("TEST_COUNT='0'"), std::string::npos) << s.message();

  ParamTable<Config> copy = params();
  copy.spec_update("size", [](ParamSpec& spec) { spec.default_text = "ten"; });
  EXPECT_EQ(copy.find("size")->spec.default_text, "ten");
  EXPECT_TRUE(params().find("size")->spec.default_text.empty());
}

}  // namespace
}  // namespace kiln
