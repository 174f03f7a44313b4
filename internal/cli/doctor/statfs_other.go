//go:build !linux

package doctor

import "errors"

// statfs is not implemented off Linux: free_space then fails with this error.
func statfs(string) (Space, error) {
	return Space{}, errors.New("statfs is only implemented on Linux")
}
