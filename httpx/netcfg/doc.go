// Package netcfg checks and parses the network values of role configs that
// several roles share: base URLs (storage_url, index_url, advertise_url …)
// and lists of networks (trusted_proxies). Each role wraps the errors with
// its own key ("edge.trusted_proxies: …").
package netcfg
