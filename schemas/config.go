package schemas

import (
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// configName is the schema of the project configuration file, .idemlint.json.
const configName = "config"

// compiledConfig is the config schema with the set its errors are
// translated with.
type compiledConfig struct {
	set    *schemaSet
	schema *jsonschema.Schema
}

// configSchema is compiled on first use, apart from the boundary schemas:
// most runs have no configuration file.
var configSchema = sync.OnceValues(func() (compiledConfig, error) {
	c, err := newCompiler()
	if err != nil {
		return compiledConfig{}, err
	}
	sch, err := c.Compile(schemaURL(configName))
	if err != nil {
		return compiledConfig{}, err
	}
	// The set carries only what the translator reads for this schema: its
	// own subschemas (for unknown-field suggestions) and the phrases of the
	// common $defs it refers to. It has no boundary kinds, so an unknown
	// key is never explained as "only allowed on adapter documents".
	s := &schemaSet{byLoc: map[string]*jsonschema.Schema{}, expect: load().expect}
	s.index(sch)
	return compiledConfig{set: s, schema: sch}, nil
})

// ValidateConfig validates a decoded .idemlint.json (map[string]any, []any,
// string, bool, nil and json.Number) against config.schema.json. Violations
// are worded, sorted and deduplicated as Validate's are; nil when valid.
func ValidateConfig(v any) []Violation {
	c, err := configSchema()
	if err != nil {
		// Embedded and covered by tests, like the boundary schemas.
		panic("schemas: compiling the embedded config schema: " + err.Error())
	}
	return c.set.validate(c.schema, v)
}
