/**
 * The Profile's Collections tab: the titles saved with "Add to Collection" on a result
 * (`GET /api/collections/items`), each with poster, title, year and a Remove button
 * (`DELETE /api/collections/items/{id}`). Empty: "No collections yet" (SPEC).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { deleteJson, getJson } from "../lib/api";
import { useToast } from "../lib/useToast";
import { Poster } from "../identify/Poster";
import { Icon } from "../identify/icons";

export interface CollectionItem {
  id: number;
  title: string;
  year: string | null;
  posterUrl: string | null;
  tmdbId: number | null;
  createdAt: string;
}

export const COLLECTION_KEY = ["/api/collections/items"] as const;

export function Collections() {
  const { toast } = useToast();
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: COLLECTION_KEY,
    queryFn: () => getJson<{ items: CollectionItem[]; total: number }>("/api/collections/items"),
  });
  const remove = useMutation({
    mutationFn: (item: CollectionItem) => deleteJson(`/api/collections/items/${item.id}`),
    onSuccess: (_data, item) => {
      queryClient.setQueryData<{ items: CollectionItem[]; total: number }>(COLLECTION_KEY, (old) =>
        old ? { items: old.items.filter((i) => i.id !== item.id), total: Math.max(0, old.total - 1) } : old,
      );
      toast({ title: "Removed from Collection", description: `${item.title} was removed from your collection.` });
    },
    onError: () => toast({ title: "Error", description: "Failed to remove from collection", variant: "destructive" }),
  });

  if (query.isPending) {
    return (
      <p className="profile-empty" role="status">
        Loading your collection...
      </p>
    );
  }
  if (query.isError) {
    return (
      <div className="profile-empty" role="alert">
        <p>We couldn't load your collection. Please try again.</p>
        <button type="button" className="btn btn-secondary" onClick={() => void query.refetch()}>
          Try again
        </button>
      </div>
    );
  }
  const items = query.data.items;
  if (items.length === 0) return <p className="profile-empty">No collections yet</p>;
  return (
    <div className="collection">
      <p className="collection-count">
        {items.length} {items.length === 1 ? "title" : "titles"} saved
      </p>
      <ul className="collection-grid" data-testid="collection-items">
        {items.map((item) => (
          <li key={item.id} className="collection-card">
            <Poster src={item.posterUrl} alt={`${item.title} poster`} className="collection-poster" />
            <div className="collection-meta">
              <h3 className="collection-title">{item.title}</h3>
              {item.year && <p className="collection-year">{item.year}</p>}
            </div>
            <button
              type="button"
              className="btn btn-ghost collection-remove"
              aria-label={`Remove ${item.title} from collection`}
              disabled={remove.isPending && remove.variables?.id === item.id}
              onClick={() => remove.mutate(item)}
            >
              <Icon name="trash" size={16} aria-hidden="true" /> Remove
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
