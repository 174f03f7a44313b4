package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/nodeid"
)

// gossipKeyContext is the BLAKE3 derive-key context of the gossip key
// (docs/cluster.md §2).
const gossipKeyContext = "ron cluster gossip v1"

// resolveNodeID is this node's id: cluster.node_id when set, else the ULID
// of <data>/node.id (created on first start; new per process in amnesia).
func resolveNodeID(c *Config) (string, error) {
	if c.Cluster.NodeID != "" {
		return c.Cluster.NodeID, nil
	}
	id, err := nodeid.Load(c.DataDir, c.Amnesia)
	if err != nil {
		return "", fmt.Errorf("node id: %w", err)
	}
	return id, nil
}

// loadRootKey returns the node's root key (docs/architecture.md §6). With
// cluster.root_key_file set, that file replaces <data>/keys/root.key for the
// whole node: it is read and never created; in amnesia mode a missing file
// gives a key kept in memory (inMemory = true), which no other node shares.
// Otherwise the key is <data>/keys/root.key as auth.LoadOrCreateRootKey.
func loadRootKey(c *Config) (keys *auth.Keyring, inMemory bool, err error) {
	if c.Cluster.RootKeyFile == "" {
		keys, err = auth.LoadOrCreateRootKey(c.DataDir, c.Amnesia)
		return keys, false, err
	}
	keys, err = auth.ReadKeyFile(c.Cluster.RootKeyFile)
	if errors.Is(err, fs.ErrNotExist) && c.Amnesia {
		keys, err = auth.GenerateKeyring()
		return keys, true, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("cluster.root_key_file: %w", err)
	}
	return keys, false, nil
}

// ReadRootKey reads the root key without creating it, for client commands
// on the node: cluster.root_key_file when set, else <data>/keys/root.key.
func ReadRootKey(c *Config) (*auth.Keyring, error) {
	return auth.ReadNodeKey(c.DataDir, c.Cluster.RootKeyFile)
}

// privateReads reports whether this node's reads need a token: then node
// tokens also carry the read scopes (docs/cluster.md §2).
func privateReads(c *Config) bool { return !c.Storage.PublicReads || !c.Index.PublicReads }

// nodeTokenSource mints the node-to-node bearer tokens of cluster mode.
func nodeTokenSource(c *Config, keys *auth.Keyring) func(context.Context) (string, error) {
	return auth.TokenSource(keys, cluster.NodeScopes(privateReads(c))...)
}
