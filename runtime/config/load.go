package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
)

// EnvPrefix starts every config environment variable.
const EnvPrefix = "RON_"

// nonKeys are RON_* variables that are not config keys.
var nonKeys = map[string]bool{"RON_CONFIG": true, "RON_TOKEN": true}

// Sources says where a Load reads from, lowest precedence first after the
// defaults, which are the values already in the struct passed to Load.
type Sources struct {
	File    string         // TOML file; "" = none
	Environ []string       // KEY=VALUE pairs, usually os.Environ()
	Flags   *pflag.FlagSet // flags registered by RegisterFlags; only the ones set count
}

// Load fills cfg (a pointer to a struct holding the defaults) from the
// sources. Unknown keys in the file or environment, and values that do not
// parse, are errors naming the key.
func Load(cfg any, src Sources) error {
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(flatDefaults(cfg), "."), nil); err != nil {
		return err
	}
	if src.File != "" {
		if _, err := os.Stat(src.File); err != nil {
			return fmt.Errorf("config file: %w", err)
		}
		if err := k.Load(file.Provider(src.File), toml.Parser()); err != nil {
			return fmt.Errorf("config file %s: %w", src.File, err)
		}
	}
	if err := k.Load(env.Provider(".", env.Opt{Prefix: EnvPrefix, TransformFunc: envKey,
		EnvironFunc: func() []string { return src.Environ }}), nil); err != nil {
		return err
	}
	if err := k.Load(confmap.Provider(setFlags(src.Flags), "."), nil); err != nil {
		return err
	}
	return decode(k, cfg)
}

func decode(k *koanf.Koanf, cfg any) error {
	dc := &mapstructure.DecoderConfig{
		ErrorUnused:      true,
		WeaklyTypedInput: true,
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.TextUnmarshallerHookFunc(),
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		),
	}
	err := k.UnmarshalWithConf("", cfg, koanf.UnmarshalConf{Tag: "koanf", DecoderConfig: dc})
	if err != nil {
		return fmt.Errorf("config: %w", cleanDecodeError(err))
	}
	return nil
}

// cleanDecodeError keeps mapstructure's messages (they name the key) but drops
// its multi-line wrapping.
func cleanDecodeError(err error) error {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	msg = strings.Join(strings.Fields(msg), " ")
	return errors.New(msg)
}

func envKey(k, v string) (string, any) {
	if nonKeys[k] {
		return "", nil
	}
	key := strings.ToLower(strings.TrimPrefix(k, EnvPrefix))
	return strings.ReplaceAll(key, "__", "."), v
}

func flatDefaults(cfg any) map[string]any {
	out := map[string]any{}
	for _, f := range Fields(cfg) {
		out[f.Key] = f.Value.Interface()
	}
	return out
}

// FlagName is the command-line spelling of a key: dots between section and
// key, '-' for '_' ("storage.max-object-bytes", "data-dir").
func FlagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

// RegisterFlags adds one string flag per key of cfg (with its default shown)
// to fs. Keys listed in skip are left for the caller to register itself.
func RegisterFlags(fs *pflag.FlagSet, cfg any, skip ...string) {
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	for _, f := range Fields(cfg) {
		if skipped[f.Key] || isTableList(f.Value) {
			continue // tables are set in the file only
		}
		def := f.Text()
		if f.Secret {
			def = ""
		}
		if f.Value.Kind() == reflect.Bool {
			fs.Bool(FlagName(f.Key), f.Value.Bool(), f.Help)
		} else {
			fs.String(FlagName(f.Key), def, f.Help)
		}
		MarkKey(fs, FlagName(f.Key))
	}
}

func setFlags(fs *pflag.FlagSet) map[string]any {
	out := map[string]any{}
	if fs == nil {
		return out
	}
	fs.Visit(func(fl *pflag.Flag) {
		if fl.Annotations["ron-config"] != nil {
			out[keyOf(fl.Name)] = flagValue(fl)
		}
	})
	return out
}

// MarkKey tells Load that flag name (registered by the caller, e.g. a bool
// --amnesia) sets the config key of the same name.
func MarkKey(fs *pflag.FlagSet, name string) {
	_ = fs.SetAnnotation(name, "ron-config", []string{"1"})
}

func keyOf(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

func flagValue(fl *pflag.Flag) any {
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	return fl.Value.String()
}

// Equal reports whether two config values hold the same settings.
func Equal(a, b any) bool { return reflect.DeepEqual(a, b) }
