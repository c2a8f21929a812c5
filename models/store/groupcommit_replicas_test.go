package store_test

import (
	"sync"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestBatchesOfTwoStores: two stores on one database (two replicas on
// PostgreSQL) batch their writers, and the same requests are filed on one and
// edited and decided on both at once. A batch holds the audit chain's head
// while its later jobs lock their rows, so if any writer took a row before the
// head, two batches could each hold what the other waits for: PostgreSQL
// would abort one with a deadlock and every writer in it would fail. Only the
// conflicts of racing on the same request may come back.
func TestBatchesOfTwoStores(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		a, b := replicas(t, dialect)
		p := agent(t, a, "racer")
		const rounds, writers = 40, 6
		var wg sync.WaitGroup
		errs := make(chan error, rounds*writers*2)
		for range rounds {
			r := file(t, a, p, models.NewRequest{Unsealed: true})
			for w := range writers {
				s := []*store.Store{a, b}[w%2]
				wg.Go(func() {
					var err error
					switch w % 3 {
					case 0:
						_, err = s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"})
					case 1:
						_, err = s.PatchRequest(ctx, r.ID, p, store.Patch{Summary: ptr("edited")})
					default:
						_, _, err = s.CreateRequest(ctx, p, models.NewRequest{Title: "beside", Options: allowDeny()}, "")
					}
					errs <- err
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err == nil {
				continue
			}
			switch models.ErrorCode(err) {
			case models.ECodeAlreadyDecided, models.ECodeVersionConflict, models.ECodeNotOpen:
			default:
				t.Errorf("a writer failed: %v", err)
			}
		}
	})
}
