/** The rating as stars (SPEC "Result view": out of 10 shown as five stars, halves included). */
import { Icon } from "./icons";
import { parseRating, ratingStars } from "./result";

export function RatingStars({ rating }: { rating: unknown }) {
  const stars = ratingStars(rating);
  const r = parseRating(rating);
  if (!stars || r === null) return null;
  const label = `Rated ${r.toFixed(1).replace(/\.0$/, "")} out of 10 (${stars.value.toFixed(1).replace(/\.0$/, "")} of 5 stars)`;
  return (
    <span className="id-stars" role="img" aria-label={label} data-full={stars.full} data-half={stars.half ? 1 : 0}>
      {Array.from({ length: stars.full }, (_, i) => (
        <span key={`f${i}`} className="id-star id-star-full" aria-hidden="true">
          <Icon name="star" size={16} />
        </span>
      ))}
      {stars.half && (
        <span className="id-star id-star-half" aria-hidden="true">
          <Icon name="star" size={16} />
          <span className="id-star-half-fill">
            <Icon name="star" size={16} />
          </span>
        </span>
      )}
      {Array.from({ length: stars.empty }, (_, i) => (
        <span key={`e${i}`} className="id-star id-star-empty" aria-hidden="true">
          <Icon name="star" size={16} />
        </span>
      ))}
      <span className="id-rating-number" aria-hidden="true">
        {r.toFixed(1)}
      </span>
    </span>
  );
}
