package roles

import (
	"github.com/ronhq/ron/roles/storage"
	"github.com/ronhq/ron/runtime"
)

// newStorage wires the storage role. Announcing is off until the index role
// lands: no index client exists yet, so the sink is nil and status says why.
func newStorage(d *Deps) (runtime.Role, error) {
	return storage.New(storage.Options{
		Config:      d.Config.Storage,
		DataDir:     d.Config.DataDir,
		Amnesia:     d.Config.Amnesia,
		Log:         d.Log,
		Metrics:     d.Metrics,
		Keys:        d.Keys,
		Bus:         d.Bus,
		Version:     d.Version,
		Ops:         d.Ops,
		AnnounceOff: "no index client (the index role is not built yet)",
	}), nil
}
